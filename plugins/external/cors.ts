import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** Response headers a browser script may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'Location', 'Preference-Applied', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id',
  'User-Count', 'X-An-Int', 'X-A-Bool', 'Accept-Ranges', 'Content-Range', 'Next-Range', 'Total-Count'
].join(', ')

/**
 * @fastify/cors for the origins of CORS_ORIGINS (comma-separated, `*` for any; none by default),
 * with options fixed at start-up:
 *
 * - A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`, Fetch standard) is
 *   answered as one, on any path and before authentication, even when no origin is allowed: 204
 *   with the methods, the requested headers and a max-age, and `Access-Control-Allow-Origin` only
 *   for an allowed origin. The catch-all description page never sees it.
 * - Any other request gets `Access-Control-Allow-Origin` when its origin is allowed, and the
 *   response headers scripts may read (`Access-Control-Expose-Headers`). The hook runs first, so
 *   errors carry them too. With a list of origins every response says `Vary: Origin`, so that a
 *   cache never serves one origin's answer to another.
 * - An OPTIONS request that is not a preflight goes to the not-found handler, like any method a
 *   path does not have (405 JSON with `Allow`), where @fastify/cors would answer a 400 in text.
 *
 * Fixed options rather than a delegator choosing them per request: @fastify/cors then rebuilds
 * its options for every request, which measured about 15 µs of CPU per GET /hello here.
 */
export const autoConfig = (fastify: FastifyInstance): FastifyCorsOptions => {
  const listed = fastify.config.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  return {
    origin: listed.includes('*') ? '*' : listed,
    methods: 'GET, HEAD, POST, PUT, DELETE',
    maxAge: 600,
    exposedHeaders: EXPOSED_HEADERS
  }
}

export default fp<FastifyCorsOptions>(async function corsPlugin (fastify, options) {
  fastify.addHook('onRequest', function notAPreflight (request, reply, done) {
    if (request.method === 'OPTIONS' &&
      (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined)) {
      reply.callNotFound()
      return
    }
    done()
  })
  await fastify.register(cors, options)
}, { name: 'cors', dependencies: ['config'] })
