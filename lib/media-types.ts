/** Writes a response body in one media type. */
export type Serializer = (payload: any) => string

/** A JSON media type: `application/json` or a `+json` suffix. */
export const isJson = (type: string) => type === 'application/json' || type.endsWith('+json')

/** The Content-Type header for a produced type: text and JSON are UTF-8. */
export function contentTypeHeader (type: string): string {
  return type.startsWith('text/') || isJson(type) ? `${type}; charset=utf-8` : type
}

/** The media type of a Content-Type header value, without parameters, lower case. */
export function essence (header: string): string {
  return (header.split(';', 1)[0] ?? '').trim().toLowerCase()
}

/**
 * The first content coding of a `Content-Encoding` header other than identity, or undefined: a
 * body is read as it is sent, never decoded, so that what a proxy or a firewall inspected is what
 * the service reads and stores (docs/contract.md, Errors).
 */
export function unsupportedCoding (header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  for (const part of header.split(',')) {
    const coding = part.trim()
    if (coding !== '' && coding.toLowerCase() !== 'identity') return coding
  }
  return undefined
}
