import type { Static, TObject } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { collectionSchemas } from '../schemas/collection.js'
import { TooManyResponse, UnavailableResponse, errorResponses } from '../schemas/common.js'
import { answerList } from './collection-list.js'
import { StoredJson, type Listed, type Repository } from './repository.js'
import { ItemNotFound } from './error-codes.js'

/** The routes of a collection: GET /, POST /, GET /:id, PUT /:id, DELETE /:id. */
export type CollectionRoute = 'list' | 'add' | 'view' | 'update' | 'delete'

export interface Collection<T extends TObject> {
  /** The item's schema: validates the bodies, writes the responses, documents both. */
  item: T
  /** What one item is called in summaries and messages: `user`. */
  name: string
  /** The name of the id capture: `userid`. */
  id: string
  repository: Repository<Static<T>>
  /** Credentials that POST, PUT and DELETE need (reads are public), as a route's `config.auth`. */
  writeAuth?: FastifyContextConfig['auth']
  /** The routes to register, all by default. A prefix that extends one leaves it out and defines its own. */
  routes?: readonly CollectionRoute[]
}

const RETURN_REPRESENTATION = 'return=representation'

/**
 * The preferences of `Prefer` headers (RFC 7240): comma-separated `token[=value]`, parameters after
 * `;` ignored, token and value compared without case, a quoted value unquoted, the first
 * occurrence of a token wins. Several headers arrive joined with commas.
 */
export function preferences (header: string | undefined): Map<string, string> {
  const found = new Map<string, string>()
  for (const preference of header?.split(',') ?? []) {
    const [pair = ''] = preference.split(';', 1)
    const separator = pair.indexOf('=')
    const token = (separator === -1 ? pair : pair.slice(0, separator)).trim().toLowerCase()
    const value = separator === -1 ? '' : pair.slice(separator + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase()
    if (token !== '' && !found.has(token)) found.set(token, value)
  }
  return found
}

/** The `return` preference of a request: `representation`, `minimal`, or undefined. */
function returnPreference (request: FastifyRequest): string | undefined {
  const header = request.headers.prefer
  return header === undefined ? undefined : preferences([header].flat().join(',')).get('return')
}

/**
 * Registers the list/add/view/update/delete routes of one collection on a prefix (the plugin's):
 * the same semantics for every collection (docs/contract.md, "Collections"), its own item
 * schema, id and repository.
 */
export function collectionRoutes<T extends TObject> (fastify: FastifyInstance, collection: Collection<T>): void {
  const { item, name, id, repository, writeAuth, routes = ['list', 'add', 'view', 'update', 'delete'] } = collection
  // The schemas below decode and validate these; the types follow from them.
  const idOf = (request: FastifyRequest) => (request.params as Record<string, number>)[id] as number
  const bodyOf = (request: FastifyRequest) => request.body as Static<T>
  const prefix = fastify.prefix
  // Location is where the client finds the item: under the proxy's path prefix, when there is one.
  const itemsUrl = `${fastify.config.BASE_PATH}${prefix}`
  const maxItems = fastify.config.COLLECTION_MAX_ITEMS
  const { Params, Items, ListHeaders, Page, PreferHeaders, Created, Replaced, Deleted, WithLocation, WithPreference, Full } = collectionSchemas(item, name, id, prefix, maxItems)
  // The auth plugin adds the 401 of these routes when it enforces the credentials.
  const writeConfig: FastifyContextConfig = writeAuth === undefined ? {} : { auth: writeAuth }

  if (routes.includes('list')) {
    fastify.get('/', {
      schema: {
        summary: `Every ${name}, in id order; or a page of them by id`,
        description: `With a \`Range\` header (\`id [<value>][; offset <o>][; limit <l>][; order <asc|desc>]\`, as on /colors), a page of the ${name}s by id: ` +
          '206 with `Accept-Ranges`, `Total-Count`, and on a non-empty page `Content-Range` and, unless it is the last page, `Next-Range`. ' +
          'A malformed Range is a 400.',
        produces: ['application/json'],
        headers: ListHeaders,
        response: { 200: Items, 206: Page, ...errorResponses(400, 406), 429: TooManyResponse, 503: UnavailableResponse }
      }
    }, (request, reply) => answerList(request, reply, { repository }))
  }

  if (routes.includes('add')) {
    fastify.post('/', {
      schema: {
        summary: `Add a ${name}`,
        description: `204 with \`Location: ${prefix}/<id>\`; with \`Prefer: return=representation\`, 201 with the ${name} as well.`,
        produces: ['application/json'],
        headers: PreferHeaders,
        body: item,
        // The store refuses past the ceiling (lib/repository.ts, create): no 409 without one.
        response: { 201: WithLocation, 204: Created, ...errorResponses(400, 406), ...(maxItems > 0 ? { 409: Full } : {}), ...errorResponses(413, 415), 503: UnavailableResponse }
      },
      config: writeConfig
    }, async (request, reply) => {
      const created = await repository.create(bodyOf(request))
      reply.header('location', `${itemsUrl}/${created}`)
      return writeAnswer(request, reply, 201)
    })
  }

  if (routes.includes('view')) {
    fastify.get('/:' + id, {
      schema: {
        summary: `The ${name} with this id`,
        produces: ['application/json'],
        params: Params,
        response: { 200: item, ...errorResponses(400, 404, 406), 503: UnavailableResponse }
      }
    }, (request, reply) => {
      const key = idOf(request)
      const found = repository.entry(key)
      return found instanceof Promise ? found.then((entry) => itemAnswer(reply, entry, key)) : itemAnswer(reply, found, key)
    })
  }

  /**
   * GET /:id's answer from what the store has: the item, which Fastify then serialises, its stored
   * JSON sent as it is, or a 404. Without a promise when the store has the item at hand: a handler
   * that returns a promise costs one more turn of the microtask queue and its allocations.
   */
  function itemAnswer (reply: FastifyReply, found: Listed<Static<T>> | undefined, key: number): Static<T> | undefined {
    if (found === undefined) throw new ItemNotFound(name, id, key)
    // The text the store keeps for the item, written by this item schema's serializer (which also
    // validated it on the way in), is the answer's bytes already: sent as it is.
    if (found instanceof StoredJson) {
      reply.serializer(String).send(found.text)
      return undefined
    }
    return found
  }

  if (routes.includes('update')) {
    fastify.put('/:' + id, {
      schema: {
        summary: `Replace the ${name} with this id`,
        description: `204; with \`Prefer: return=representation\`, 200 with the ${name}. An invalid body leaves the ${name} unchanged.`,
        produces: ['application/json'],
        params: Params,
        headers: PreferHeaders,
        body: item,
        response: { 200: WithPreference, 204: Replaced, ...errorResponses(400, 404, 406, 413, 415), 503: UnavailableResponse }
      },
      config: writeConfig
    }, async (request, reply) => {
      const key = idOf(request)
      if (!await repository.replace(key, bodyOf(request))) throw new ItemNotFound(name, id, key)
      return writeAnswer(request, reply, 200)
    })
  }

  if (routes.includes('delete')) {
    fastify.delete('/:' + id, {
      schema: {
        summary: `Delete the ${name} with this id`,
        description: 'Its id is never given to another item.',
        produces: ['application/json'],
        params: Params,
        response: { 204: Deleted, ...errorResponses(400, 404, 406), 503: UnavailableResponse }
      },
      config: writeConfig
    }, async (request, reply) => {
      const key = idOf(request)
      if (!await repository.delete(key)) throw new ItemNotFound(name, id, key)
      return noContent(reply)
    })
  }
}

/**
 * The answer to a write: the item with `status` when the request prefers a representation
 * (RFC 7240), else 204; the preference applied is echoed.
 */
function writeAnswer (request: FastifyRequest, reply: FastifyReply, status: 200 | 201) {
  const preference = returnPreference(request)
  if (preference === 'representation') {
    return reply.code(status).header('preference-applied', RETURN_REPRESENTATION).send(request.body)
  }
  if (preference === 'minimal') reply.header('preference-applied', 'return=minimal')
  return noContent(reply)
}

/** 204: no body, so no Content-Type either (content negotiation has set one for a body). */
function noContent (reply: FastifyReply) {
  return reply.code(204).removeHeader('content-type').send()
}
