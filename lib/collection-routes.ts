import type { Static, TObject } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyReply, FastifyRequest, RouteShorthandOptionsWithHandler } from 'fastify'
import { collectionSchemas } from '../schemas/collection.js'
import { TooManyResponse, UnavailableResponse, errorResponses } from '../schemas/common.js'
import { answerList } from './collection-list.js'
import { StoredJson, type Listed, type Repository } from './repository.js'
import { ItemNotFound } from './error-codes.js'
import type { Config } from './config/schema.js'

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
}

/** Where the routes are served: the route plugin's own `fastify` has both. */
export interface CollectionPlace {
  /** The plugin's prefix, `/users`: the items' URLs and the documentation name it. */
  prefix: string
  config: Pick<Config, 'BASE_PATH' | 'COLLECTION_MAX_ITEMS'>
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
 * The options, handler included, of the list/add/view/update/delete routes of one collection: the
 * same semantics for every collection (docs/contract.md, "Collections"), its own item schema, id
 * and repository. The route file registers each on its method and URL (routes/products/index.ts):
 * `list` and `add` on `/`, the others on `/:<id>`.
 */
export function collectionRoutes<T extends TObject> (collection: Collection<T>, { prefix, config }: CollectionPlace) {
  const { item, name, id, repository, writeAuth } = collection
  // The schemas below decode and validate these; the types follow from them.
  const idOf = (request: FastifyRequest) => (request.params as Record<string, number>)[id] as number
  const bodyOf = (request: FastifyRequest) => request.body as Static<T>
  // Location is where the client finds the item: under the proxy's path prefix, when there is one.
  const itemsUrl = `${config.BASE_PATH}${prefix}`
  const maxItems = config.COLLECTION_MAX_ITEMS
  const { Params, Items, ListHeaders, Page, PreferHeaders, Created, Replaced, Deleted, WithLocation, WithPreference, Full } = collectionSchemas(item, name, id, prefix, maxItems)
  // The auth plugin adds the 401 of these routes when it enforces the credentials.
  const writeConfig: FastifyContextConfig = writeAuth === undefined ? {} : { auth: writeAuth }

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

  return {
    /** GET / */
    list: {
      schema: {
        summary: `Every ${name}, in id order; or a page of them by id`,
        description: `With a \`Range\` header (\`id [<value>][; offset <o>][; limit <l>][; order <asc|desc>]\`, as on /colors), a page of the ${name}s by id: ` +
          '206 with `Accept-Ranges`, `Total-Count`, and on a non-empty page `Content-Range` and, unless it is the last page, `Next-Range`. ' +
          'A malformed Range is a 400.',
        produces: ['application/json'],
        headers: ListHeaders,
        response: { 200: Items, 206: Page, ...errorResponses(400, 406), 429: TooManyResponse, 503: UnavailableResponse }
      },
      handler: (request, reply) => answerList(request, reply, { repository })
    },

    /** POST / */
    add: {
      schema: {
        summary: `Add a ${name}`,
        description: `204 with \`Location: ${prefix}/<id>\`; with \`Prefer: return=representation\`, 201 with the ${name} as well.`,
        produces: ['application/json'],
        headers: PreferHeaders,
        body: item,
        // The store refuses past the ceiling (lib/repository.ts, create): no 409 without one.
        response: { 201: WithLocation, 204: Created, ...errorResponses(400, 406), ...(maxItems > 0 ? { 409: Full } : {}), ...errorResponses(413, 415), 503: UnavailableResponse }
      },
      config: writeConfig,
      handler: async (request, reply) => {
        const created = await repository.create(bodyOf(request))
        reply.header('location', `${itemsUrl}/${created}`)
        return writeAnswer(request, reply, 201)
      }
    },

    /** GET /:id */
    view: {
      schema: {
        summary: `The ${name} with this id`,
        produces: ['application/json'],
        params: Params,
        response: { 200: item, ...errorResponses(400, 404, 406), 503: UnavailableResponse }
      },
      handler: (request, reply) => {
        const key = idOf(request)
        const found = repository.entry(key)
        return found instanceof Promise ? found.then((entry) => itemAnswer(reply, entry, key)) : itemAnswer(reply, found, key)
      }
    },

    /** PUT /:id */
    update: {
      schema: {
        summary: `Replace the ${name} with this id`,
        description: `204; with \`Prefer: return=representation\`, 200 with the ${name}. An invalid body leaves the ${name} unchanged.`,
        produces: ['application/json'],
        params: Params,
        headers: PreferHeaders,
        body: item,
        response: { 200: WithPreference, 204: Replaced, ...errorResponses(400, 404, 406, 413, 415), 503: UnavailableResponse }
      },
      config: writeConfig,
      handler: async (request, reply) => {
        const key = idOf(request)
        if (!await repository.replace(key, bodyOf(request))) throw new ItemNotFound(name, id, key)
        return writeAnswer(request, reply, 200)
      }
    },

    /** DELETE /:id */
    delete: {
      schema: {
        summary: `Delete the ${name} with this id`,
        description: 'Its id is never given to another item.',
        produces: ['application/json'],
        params: Params,
        response: { 204: Deleted, ...errorResponses(400, 404, 406), 503: UnavailableResponse }
      },
      config: writeConfig,
      handler: async (request, reply) => {
        const key = idOf(request)
        if (!await repository.delete(key)) throw new ItemNotFound(name, id, key)
        return noContent(reply)
      }
    }
  } satisfies Record<string, RouteShorthandOptionsWithHandler>
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
