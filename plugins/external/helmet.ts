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
 * The headers of every response that is not an HTML page (JSON, text, NDJSON, files), as OWASP's
 * REST security guidance has them: nothing may be framed or loaded by such a response if a browser
 * ever renders it, its type is not sniffed, HTTPS is kept, no referrer leaks. The policies that
 * only mean something for a page (cross-origin isolation, DNS prefetch, downloads, XSS filter)
 * are left to pages.
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer'
}

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
 * Security headers on every response, errors included: helmet's on HTML pages, the API set on
 * the rest (5 headers instead of 12: about half the header bytes of a small JSON answer). Not
 * @fastify/helmet: it builds helmet's middleware anew for every request, which measured about
 * 50 µs of CPU per request on GET /hello, more than the rest of the request; the headers here are
 * computed once at start-up and set in one call when the response's type is known.
 */
export default fp<HelmetOptions>(async function securityHeadersPlugin (fastify, options) {
  const pageHeaders = securityHeaders(options)
  fastify.addHook('onSend', function setSecurityHeaders (_request, reply, payload, done) {
    const type = reply.getHeader('content-type')
    reply.headers(typeof type === 'string' && type.startsWith('text/html') ? pageHeaders : API_HEADERS)
    done(null, payload)
  })
}, { name: 'helmet' })
