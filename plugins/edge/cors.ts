import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { exposedHeaders } from '../../lib/exposed-headers.js'
import { REQUEST_ID_HEADER } from '../../lib/request-id.js'

/** The headers every answer carries that no route's schema declares: the request id (plugins/edge/security-headers.ts). */
const EVERY_ANSWER = [REQUEST_ID_HEADER.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase())]

/**
 * CORS for the origins of CORS_ORIGINS (comma-separated, `*` for any; none by default), with
 * options fixed at start-up:
 *
 * - A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`, Fetch standard) is
 *   answered by @fastify/cors, on any path and before authentication, even when no origin is
 *   allowed: 204 with the methods, the requested headers and a max-age, and
 *   `Access-Control-Allow-Origin` only for an allowed origin. The catch-all description page
 *   never sees it.
 * - An OPTIONS request that is not a preflight goes to the not-found handler, like any method a
 *   path does not have (405 JSON with `Allow`), where @fastify/cors would answer a 400 in text.
 * - Any other request from an allowed origin gets `Access-Control-Allow-Origin` and the response
 *   headers scripts may read (`Access-Control-Expose-Headers`): every header a route's response
 *   schemas declare, collected as the routes are registered and joined when the app is ready,
 *   before it listens (the plugins that add responses to a route, 401, 429, 503, do it after this
 *   one's onRoute hook), and the request id. The hook runs first, so errors
 *   carry them too. With a list of origins every response says `Vary: Origin`, so that a cache
 *   never serves one origin's answer to another. A request without `Origin` (not a browser's
 *   cross-origin request) gets nothing else, and with no origin allowed there is no hook at all.
 *
 * @fastify/cors runs only on OPTIONS requests: it is registered in a context of its own, whose
 * one route is its `OPTIONS *`. Its hook on every request rebuilt its options and wrote its two
 * headers whether or not the request came from a browser (its CPU per GET /hello: bench/README.md),
 * and 170 bytes of `Access-Control-Expose-Headers` on every answer.
 * The rest of its job, for the two forms of origin this service takes, is the hook below.
 */
export const autoConfig = (fastify: FastifyInstance): FastifyCorsOptions => {
  const listed = fastify.config.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  return {
    origin: listed.includes('*') ? '*' : listed,
    methods: 'GET, HEAD, POST, PUT, DELETE',
    maxAge: 600
  }
}

export default fp<FastifyCorsOptions>(async function corsPlugin (fastify, options) {
  // The route options objects themselves: later plugins' onRoute hooks still add to their responses.
  let routes: RouteOptions[] = []
  fastify.addHook('onRoute', (route) => { routes.push(route) })
  let exposed = ''
  fastify.addHook('onReady', function exposeDeclaredHeaders (done) {
    exposed = exposedHeaders(routes.map((route) => route.schema), EVERY_ANSWER)
    routes = []
    done()
  })

  await fastify.register(async function preflights (scope) {
    scope.addHook('onRequest', function notAPreflight (request, reply, done) {
      if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) {
        reply.callNotFound()
        return
      }
      // As @fastify/cors sets it with `exposedHeaders`, which it takes when no route is known yet.
      reply.header('access-control-expose-headers', exposed)
      done()
    })
    await scope.register(cors, options)
  })

  const { origin } = options
  if (origin === '*') {
    fastify.addHook('onRequest', function corsAnyOrigin (request, reply, done) {
      if (request.headers.origin !== undefined) {
        reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', exposed)
      }
      done()
    })
  } else if (Array.isArray(origin) && origin.length > 0) {
    const allowed = new Set(origin)
    fastify.addHook('onRequest', function corsListedOrigins (request, reply, done) {
      reply.header('vary', 'Origin')
      const requestOrigin = request.headers.origin
      if (requestOrigin !== undefined && allowed.has(requestOrigin)) {
        reply.header('access-control-allow-origin', requestOrigin).header('access-control-expose-headers', exposed)
      }
      done()
    })
  }
  // After metrics (plugins/edge/metrics.ts measures the routes registered after it): the
  // preflights' route is measured too. After host: a preflight without Host is refused, not answered.
}, { name: 'cors', dependencies: ['config', 'metrics', 'host'] })
