import fp from 'fastify-plugin'
import type { HelmetOptions } from 'helmet'
import { REQUEST_ID_HEADER } from '../../lib/request-id.js'
import { API_HEADERS, securityHeaders } from '../../lib/security-headers.js'

/**
 * helmet's defaults, for HTML pages, with a Content-Security-Policy that Swagger UI at
 * /documentation works under: its scripts, styles and the calls of "Try it out" all come from this
 * origin, its inline styles are allowed by helmet's `style-src`, its logo is a `data:` image.
 * `upgrade-insecure-requests` is left out: whether the API is reached over HTTPS is the reverse
 * proxy's business, and on a plain-HTTP address the directive would send the page's own requests
 * to an HTTPS port nobody serves. `npm run test:browser` checks the page in Chromium.
 */
export const autoConfig: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      upgradeInsecureRequests: null
    }
  }
}

/**
 * The headers every response carries, errors included, set in one onSend hook (one hook per
 * response rather than one per header set):
 *
 * - its request id, `X-Request-Id`: an onSend hook runs for whatever answers (a route, a hook
 *   that refuses, the not-found handler). The id itself comes from the server option `genReqId`
 *   (lib/request-id.ts). The errors Fastify raises before routing set the header in
 *   `frameworkErrors`, the unparsable requests in `clientErrorHandler` (lib/framework-errors.ts).
 * - security headers: helmet's on HTML pages, the API set on the rest (5 headers instead of 12:
 *   about half the header bytes of a small JSON answer). Not @fastify/helmet: it builds helmet's
 *   middleware anew for every request, which cost more CPU on GET /hello than the rest of the
 *   request (figures: bench/README.md); the headers here are computed once at start-up and
 *   set in one call when the response's type is known.
 */
export default fp<HelmetOptions>(async function securityHeadersPlugin (fastify, options) {
  const pageHeaders = securityHeaders(options)
  fastify.addHook('onSend', function setEdgeHeaders (request, reply, payload, done) {
    const type = reply.getHeader('content-type')
    reply.headers(typeof type === 'string' && type.startsWith('text/html') ? pageHeaders : API_HEADERS)
    reply.header(REQUEST_ID_HEADER, request.id)
    done(null, payload)
  })
}, { name: 'security-headers' })
