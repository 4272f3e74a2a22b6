import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * The headers helmet's middleware sets for `options`, computed once: it is run against a response
 * that only records them. Every value must be static (no per-request nonce functions).
 */
export function securityHeaders (options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: string) { headers[name.toLowerCase()] = value },
    removeHeader (name: string) { delete headers[name.toLowerCase()] }
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
  return headers
}

/**
 * helmet's defaults, with a Content-Security-Policy that Swagger UI at /documentation works under:
 * its scripts, styles and the calls of "Try it out" all come from this origin, its inline styles
 * are allowed by helmet's `style-src`, its logo is a `data:` image. `upgrade-insecure-requests` is
 * left out: whether the API is reached over HTTPS is the reverse proxy's business, and on a
 * plain-HTTP address the directive would send the page's own requests to an HTTPS port nobody
 * serves. `npm run test:browser` checks the page in Chromium under this policy.
 */
export const autoConfig: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      upgradeInsecureRequests: null
    }
  }
}

/**
 * Security headers (helmet) on every response, errors included. Not @fastify/helmet: it builds
 * helmet's middleware anew for every request, which measured about 50 µs of CPU per request on
 * GET /hello, more than the rest of the request; the headers here are computed once at start-up
 * and set in one call (about 5 µs, most of it writing them).
 */
export default fp<HelmetOptions>(async function securityHeadersPlugin (fastify, options) {
  const headers = securityHeaders(options)
  fastify.addHook('onRequest', function setSecurityHeaders (_request, reply, done) {
    reply.headers(headers)
    done()
  })
}, { name: 'helmet' })
