import fp from 'fastify-plugin'
import { HostMissing } from '../../lib/error-codes.js'
import { lacksHost } from '../../lib/framework-errors.js'

/** A client that sends no Host is not one to keep a connection for, as node:http did not. */
const CLOSE = { connection: 'close' }

/**
 * An HTTP/1.1 request without `Host` gets a 400 (RFC 9112, section 3.2),
 * refused in the first onRequest hook of every route and of the not-found handler: the JSON error
 * body, the request id and the security headers of every answer, and the connection closed after
 * it. node:http refused it before Fastify saw it, with a bare 400 (server option
 * `requireHostHeader`, off in app.ts: docs/contract.md, Errors).
 */
export default fp(async function host (fastify) {
  fastify.addHook('onRequest', function requireHost (request, _reply, done) {
    done(lacksHost(request.raw) ? Object.assign(new HostMissing(), { headers: CLOSE }) : undefined)
  })
}, { name: 'host' })
