import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

export const REQUEST_ID_HEADER = 'x-request-id'

/** An id worth keeping: 1 to 128 visible ASCII characters (no spaces or controls; a repeated header, joined with ", ", is not one). */
const SANE_ID = /^[\x21-\x7e]{1,128}$/

/**
 * Server option `genReqId`: the request's `X-Request-Id` (set by the proxy or the client) when it
 * is sane, else a new UUID, so that ids never collide across processes and replicas. Fastify
 * logs it as the `reqId` of every line about the request.
 */
export function requestId (req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID()
}

/**
 * Every response says its request id in `X-Request-Id`, errors included: an onSend hook runs for
 * whatever answers (a route, a hook that refuses, the not-found handler). The errors Fastify
 * raises before routing set it in `frameworkErrors`, the unparsable requests in `clientErrorHandler`.
 */
export default fp(async function requestIdHeader (fastify) {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done(null, payload)
  })
}, { name: 'request-id' })
