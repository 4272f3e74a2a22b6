import fp from 'fastify-plugin'
import accepts from '@fastify/accepts'
import createError from '@fastify/error'
import type { FastifyReply, onRequestHookHandler } from 'fastify'
import { ErrorSchema, UnsupportedMediaTypeResponse, addResponses } from '../schemas/common.js'
import { shorten } from '../lib/errors.js'
import { contentTypeHeader, essence, unsupportedCoding, type Serializer } from '../lib/media-types.js'
import { carriesBody } from '../lib/body-limit.js'
import { BodyNotAccepted, NotAcceptable, UnsupportedContentEncoding } from '../lib/error-codes.js'

declare module 'fastify' {
  interface FastifySchema {
    /** Media types the route answers with, by preference: the first one is the default. */
    produces?: readonly string[]
    /** Media types the route reads a body in. Routes with a body schema default to JSON. */
    consumes?: readonly string[]
  }
  interface FastifyReply {
    /**
     * The media type content negotiation chose from `schema.produces`, without parameters (the
     * reply's Content-Type says the same with its charset); null on a route that does not negotiate.
     */
    negotiated: string | null
  }
  interface FastifyContextConfig {
    /**
     * How to write the payload in the non-JSON types of `schema.produces`. `'schema'` writes it
     * with the response schema's JSON serializer under that type (e.g. octet-stream of the JSON).
     */
    serializers?: Readonly<Record<string, Serializer | 'schema'>>
  }
}

export const UnsupportedMediaType = createError('FST_ERR_CTP_INVALID_MEDIA_TYPE', '%s', 415)

function schemaSerializer (reply: FastifyReply): Serializer {
  return (payload) => (reply.getSerializationFunction(String(reply.statusCode)) ?? JSON.stringify)(payload)
}

/** onRequest hook: 406 unless `Accept` admits one of `produces`; else labels and serializes the reply in it. */
function negotiator (produces: readonly string[], serializers: Readonly<Record<string, Serializer | 'schema'>> = {}): onRequestHookHandler {
  const types = [...produces]
  const choices = new Map(types.map((type) => [type, { header: contentTypeHeader(type), serializer: serializers[type] }]))
  // What is offered is what is sent: a UTF-8 type also as `type;charset=utf-8` (the contract offers
  // `application/json;charset=utf-8`: docs/contract.md, "Media types"), or an Accept naming the
  // charset would match nothing.
  const offers = types.flatMap((type) => {
    const header = contentTypeHeader(type)
    return header === type ? [type] : [type, header.replace('; ', ';')]
  })
  const preferred = types[0] as string
  const vary = types.length > 1

  return function negotiate (request, reply, done) {
    const accept = request.headers.accept
    let type = preferred
    // Most clients send no Accept, */* or exactly the default type: skip the parse for them.
    if (accept !== undefined && accept.trim() !== '' && accept !== '*/*' && accept !== preferred) {
      // Given a list, accepts answers with one of its entries or false.
      const best = request.accepts().type(offers) as string | false
      if (best === false) return done(new NotAcceptable(shorten(accept), types.join(', ')))
      type = essence(best)
    }
    const choice = choices.get(type)!
    if (vary) {
      // Added to what is there (CORS's Origin), not in its place.
      const varies = reply.getHeader('vary')
      reply.header('vary', varies === undefined ? 'Accept' : `${String(varies)}, Accept`)
    }
    reply.header('content-type', choice.header)
    reply.negotiated = type
    if (choice.serializer === 'schema') reply.serializer(schemaSerializer(reply))
    else if (choice.serializer !== undefined) reply.serializer(choice.serializer)
    done()
  }
}

/** Who answers 415 for a content coding says which one it reads (RFC 9110, section 15.5.16). */
const ACCEPTED_CODINGS = { 'accept-encoding': 'identity' }

/**
 * onRequest hook: 415 unless the body comes in one of `consumes` (or, when optional, there is
 * none), and without a content coding.
 */
function contentTypeGuard (consumes: readonly string[], bodyRequired: boolean): onRequestHookHandler {
  const accepted = consumes.map(essence)
  const expected = `this endpoint accepts ${consumes.join(', ')}`

  return function requireSupportedBody (request, reply, done) {
    const header = request.headers['content-type']
    if (header === undefined) {
      if (bodyRequired || carriesBody(request.headers)) return done(new UnsupportedMediaType(`Content-Type is missing; ${expected}`))
    } else {
      const type = essence(header)
      if (!accepted.includes(type)) return done(new UnsupportedMediaType(`Content-Type ${shorten(type)} is not supported; ${expected}`))
    }
    const coding = unsupportedCoding(request.headers['content-encoding'])
    done(coding === undefined ? undefined : Object.assign(new UnsupportedContentEncoding(shorten(coding)), { headers: ACCEPTED_CODINGS }))
  }
}

/**
 * onRequest hook of a route that reads no body: 413 for a request that carries one, before any of
 * it is read (plugins/errors.ts closes the connection after the answer). Read or not, a body sent
 * to such a route would otherwise be read to its end by node:http, to keep the connection.
 */
const refuseBody: onRequestHookHandler = function refuseBody (request, _reply, done) {
  done(carriesBody(request.headers) ? new BodyNotAccepted(request.method, request.routeOptions.url) : undefined)
}

/**
 * Content negotiation both ways, declared once per route in its schema: `produces` (406 and the
 * serializer of the chosen type) and `consumes` (415; a route that consumes nothing refuses any
 * body, 413), each added to the route's responses. Runs in onRequest, after any authentication
 * hook of the route, before the body is parsed.
 */
export default fp(async function negotiation (fastify) {
  await fastify.register(accepts)
  fastify.decorateReply('negotiated', null)

  fastify.addHook('onRoute', (route) => {
    const { schema } = route
    const hooks: onRequestHookHandler[] = []
    if (schema?.produces !== undefined) {
      hooks.push(negotiator(schema.produces, route.config?.serializers))
      addResponses(schema, { 406: ErrorSchema })
    }
    const consumes = schema?.consumes ?? (schema?.body === undefined ? undefined : ['application/json'])
    if (consumes !== undefined) {
      hooks.push(contentTypeGuard(consumes, schema?.body !== undefined))
      // A route that reads a body refuses one over its limit too.
      addResponses(schema, { 413: ErrorSchema, 415: UnsupportedMediaTypeResponse })
      // The 415 answered here, with its Accept-Encoding, also where the route lists the status.
      const responses = schema!.response as Record<string, unknown>
      if (responses['415'] === ErrorSchema) schema!.response = { ...responses, 415: UnsupportedMediaTypeResponse }
    } else {
      hooks.push(refuseBody)
      addResponses(schema, { 413: ErrorSchema })
    }
    // A new array: the GET route and its automatic HEAD route share the original one.
    if (hooks.length > 0) route.onRequest = [...[route.onRequest ?? []].flat(), ...hooks] as typeof route.onRequest
  })
}, { name: 'negotiation' })
