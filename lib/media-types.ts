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
