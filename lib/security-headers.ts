import type { IncomingMessage, ServerResponse } from 'node:http'
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
