/**
 * Response headers a browser script reads without being told (Fetch standard, "CORS-safelisted
 * response-header name"): listing them in `Access-Control-Expose-Headers` would add nothing.
 */
const SAFELISTED = new Set(['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma'])

/** A route's schema as far as its responses go: status → response schema. */
interface RouteSchema {
  response?: unknown
}

/**
 * The headers one response schema declares: its `headers`, an object schema whose properties are
 * the headers (schemas/common.ts's `withHeaders`), or a map of name → schema, as @fastify/swagger
 * also takes them.
 */
function declaredHeaders (response: unknown): string[] {
  if (typeof response !== 'object' || response === null) return []
  const headers = (response as { headers?: unknown }).headers
  if (typeof headers !== 'object' || headers === null) return []
  const { type, properties } = headers as { type?: unknown, properties?: unknown }
  return Object.keys(type === 'object' && typeof properties === 'object' && properties !== null ? properties : headers)
}

/**
 * `Access-Control-Expose-Headers` for the routes of `schemas`: every header a response of theirs
 * declares, and the headers every answer carries (`always`, set outside the routes' schemas), but
 * the safelisted ones; each once whatever its case (as first spelled), in alphabetical order, so
 * that the value does not depend on the order the routes were registered in.
 */
export function exposedHeaders (schemas: Iterable<RouteSchema | undefined>, always: readonly string[]): string {
  const names = new Map<string, string>()
  const add = (name: string) => {
    const key = name.toLowerCase()
    if (!SAFELISTED.has(key) && !names.has(key)) names.set(key, name)
  }
  always.forEach(add)
  for (const schema of schemas) {
    const responses = schema?.response
    if (typeof responses !== 'object' || responses === null) continue
    for (const response of Object.values(responses)) declaredHeaders(response).forEach(add)
  }
  return [...names.keys()].sort().map((key) => names.get(key)).join(', ')
}
