import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** Response headers a browser script may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'Location', 'Preference-Applied', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id',
  'User-Count', 'X-An-Int', 'X-A-Bool', 'Accept-Ranges', 'Content-Range', 'Next-Range', 'Total-Count'
]

/** A CORS preflight: OPTIONS with Origin and Access-Control-Request-Method (Fetch standard). */
const isPreflight = (request: FastifyRequest) => request.raw.method === 'OPTIONS' &&
  request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined

/**
 * CORS (@fastify/cors) for the origins of CORS_ORIGINS (comma-separated, `*` for any; none by
 * default). The options are chosen per request:
 *
 * - A preflight is always answered as one, on any path and even when no origin is allowed: 204
 *   with the methods, the requested headers and a max-age, and `Access-Control-Allow-Origin` only
 *   for an allowed origin. The catch-all description page never sees it.
 * - Any other request with an `Origin` gets `Access-Control-Allow-Origin` when the origin is
 *   allowed, and the response headers scripts may read (`Access-Control-Expose-Headers`). The hook
 *   runs first, so errors carry them too. An OPTIONS request that is not a preflight goes on to the
 *   not-found handler, like any method a path does not have (405 with `Allow`).
 * - A request without `Origin` is not a CORS request: nothing is added.
 *
 * Every response says `Vary: Origin`, so that a cache never serves one origin's answer to another.
 */
export const autoConfig = (fastify: FastifyInstance): FastifyCorsOptions => {
  const listed = fastify.config.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  const origin = listed.includes('*') ? '*' : listed
  const preflight: FastifyCorsOptions = {
    origin,
    preflight: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    maxAge: 600
  }
  const simple: FastifyCorsOptions = { origin, preflight: false, exposedHeaders: EXPOSED_HEADERS }
  const none: FastifyCorsOptions = { origin: false }
  return {
    delegator: (request, callback) =>
      callback(null, isPreflight(request) ? preflight : request.headers.origin === undefined ? none : simple)
  }
}

export default cors
