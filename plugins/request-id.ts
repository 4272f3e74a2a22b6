import fp from 'fastify-plugin'
import { REQUEST_ID_HEADER } from '../lib/request-id.js'

/**
 * Every response says its request id in `X-Request-Id`, errors included: an onSend hook runs for
 * whatever answers (a route, a hook that refuses, the not-found handler). The id itself comes from
 * the server option `genReqId` (lib/request-id.ts). The errors Fastify raises before routing set
 * the header in `frameworkErrors`, the unparsable requests in `clientErrorHandler`
 * (lib/framework-errors.ts).
 */
export default fp(async function requestIdHeader (fastify) {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done(null, payload)
  })
}, { name: 'request-id' })
