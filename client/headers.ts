import { operations, type OperationInfo } from './operations.js'
import type { HeadersOf, Operation, Responses, SuccessStatus } from './operation.js'
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
 * The headers a success of `operation` declares, decoded, with the status that tells which:
 * `{ status: 200, 'User-Count': number } | { status: 206, 'Total-Count': number, 'Next-Range'?: RangeOf<'GET /users'>, … }`.
 */
export type ResponseHeaders<O extends Operation> = {
  [S in SuccessStatus<Responses<O>>]: { status: S } & { [K in keyof HeadersOf<Responses<O>[S]>]: Decoded<O, K, HeadersOf<Responses<O>[S]>[K]> }
}[SuccessStatus<Responses<O>>]

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
 * The headers `operation` declares for the status of `response`, decoded to their types (those
 * absent from the response absent from the result); throws a SyntaxError when one does not decode.
 * A status the operation declares no header for gives `{ status }` alone.
 */
export function decodeHeaders<O extends Operation> (operation: O, response: Response): ResponseHeaders<O> {
  const info: OperationInfo = operations[operation]
  const declared = info.headers?.[response.status] ?? {}
  const headers: Record<string, unknown> = { status: response.status }
  for (const [name, type] of Object.entries(declared)) {
    const text = response.headers.get(name)
    if (text !== null) headers[name] = decodeHeader(operation, name, type, text)
  }
  return headers as ResponseHeaders<O>
}
