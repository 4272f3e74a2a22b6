import { decodeError } from './errors.js'
import { operations, type OperationInfo } from './operations.js'
import type { HeadersOf, Operation, OperationResponse, Responses, Status } from './operation.js'
import { parseContentRange, parseRangeHeader, rangeFields, type ContentRange, type Pageable, type RangeOf } from './range.js'

/** A Location header read: the URL as sent, and the id that ends it (`/users/3` → 3). */
export interface CreatedLocation {
  url: string
  id: number
}

/** What one header's value decodes to: pages' Range headers and Location read, the rest as their schema types them. */
type Decoded<O extends Operation, K, V> =
  K extends 'Next-Range' ? O extends Pageable ? RangeOf<O> : V
    : K extends 'Content-Range' ? O extends Pageable ? ContentRange<O> : V
      : K extends 'Location' ? CreatedLocation
        : V

/**
 * The headers each documented status of `operation` declares, decoded, with the status that tells which:
 * `{ status: 200, 'User-Count': number } | { status: 206, 'Total-Count': number, 'Next-Range'?: RangeOf<'GET /users'>, … } | { status: 503, 'Retry-After': number } | …`.
 */
export type ResponseHeaders<O extends Operation, Of = Status<Responses<O>>> = {
  [S in Status<Responses<O>> & Of]: { status: S } & { [K in keyof HeadersOf<Responses<O>[S]>]: Decoded<O, K, HeadersOf<Responses<O>[S]>[K]> }
}[Status<Responses<O>> & Of]

/** The id that ends a Location: its last path segment, a positive integer. */
function createdLocation (url: string): CreatedLocation {
  const segment = new URL(url, 'http://localhost').pathname.split('/').pop() ?? ''
  const id = Number(segment)
  if (!/^\d+$/.test(segment) || !Number.isSafeInteger(id)) throw new SyntaxError(`Location ${JSON.stringify(url)} does not end with an id`)
  return { url, id }
}

/** One header's value as its type says; a SyntaxError when it is not of that type. */
function decodeHeader (operation: Operation, name: string, type: string, text: string): unknown {
  if (name === 'Location') return createdLocation(text)
  if (operation in rangeFields && name === 'Next-Range') return parseRangeHeader(operation as Pageable, text)
  if (operation in rangeFields && name === 'Content-Range') return parseContentRange(operation as Pageable, text)
  if (type === 'integer' || type === 'number') {
    const value = Number(text)
    if (text.trim() === '' || !Number.isFinite(value) || (type === 'integer' && !Number.isSafeInteger(value))) throw new SyntaxError(`${name}: ${JSON.stringify(text)} is not ${type === 'integer' ? 'an integer' : 'a number'}`)
    return value
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new SyntaxError(`${name}: ${JSON.stringify(text)} is not true or false`)
    return text === 'true'
  }
  return text
}

/**
 * The headers `operation` declares for the status of `response`, decoded to their types (optional
 * ones absent from the response absent from the result). A header the document requires and the
 * response lacks, or one that does not decode, is an ApiError of kind `decode` naming it. A status
 * the operation declares no header for gives `{ status }` alone. The response of a call of another
 * operation does not compile, and that of a call's answer narrowed to a success (`if (answer.error
 * === undefined)`) has the headers of its success statuses only.
 */
export function decodeHeaders<O extends Operation, S = Status<Responses<O>>> (operation: O, response: OperationResponse<NoInfer<O>, S>): ResponseHeaders<O, S> {
  const info: OperationInfo = operations[operation]
  const declared = info.headers?.[response.status] ?? {}
  const headers: Record<string, unknown> = { status: response.status }
  for (const [name, declaration] of Object.entries(declared)) {
    const text = response.headers.get(name)
    const type = declaration.replace('?', '')
    try {
      if (text !== null) headers[name] = decodeHeader(operation, name, type, text)
      else if (type === declaration) throw new SyntaxError(`${name}: required, and missing`)
    } catch (err) {
      throw decodeError(response, err, operation, name)
    }
  }
  return headers as ResponseHeaders<O, S>
}
