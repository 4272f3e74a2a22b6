import type { JsonOf, Responses } from './operation.js'

// Paging by Range (the service's docs/contract.md): a request header
// `<field> [<value>][; limit <l>][; offset <o>][; order <asc|desc>]` on one of a route's fields,
// and the page's `Content-Range: <field> <first>..<last>` and `Next-Range` (the next page's Range).

/**
 * The operations that page by Range, the fields each may be paged on and the type of their
 * values (test/client/range.test.ts holds this table to the service's own).
 */
export const rangeFields = {
  'GET /colors': { name: 'string', hex: 'string', rgb: 'integer' },
  'GET /users': { id: 'integer' },
  'GET /products': { id: 'integer' },
  'GET /users/list-all': { id: 'integer' },
  'GET /users/list-all/now': { id: 'integer' },
  'GET /list-all/users': { id: 'integer' }
} as const satisfies Record<string, Record<string, 'string' | 'integer'>>

type RangeFieldTable = typeof rangeFields

/** An operation that pages by Range. */
export type Pageable = keyof RangeFieldTable

/** The fields of a pageable operation and the type of their values: `{ name: string, hex: string, rgb: number }`. */
export type RangeFields<O extends Pageable> = { -readonly [F in keyof RangeFieldTable[O]]: RangeFieldTable[O][F] extends 'integer' ? number : string }

/** The items of a pageable operation's pages. */
export type PageItem<O extends Pageable> = JsonOf<Responses<O>[206 & keyof Responses<O>]> extends ReadonlyArray<infer T> ? T : never

export type RangeOrder = 'asc' | 'desc'

/**
 * A Range of a pageable operation: a field of that operation, the value to start from (of the
 * field's type, inclusive), and the options; those left out take the service's defaults.
 */
export type RangeOf<O extends Pageable> = {
  [F in keyof RangeFields<O> & string]: { field: F, value?: RangeFields<O>[F], limit?: number, offset?: number, order?: RangeOrder }
}[keyof RangeFields<O> & string]

/** A page's Content-Range: the field, and its values on the first and last items of the page. */
export type ContentRange<O extends Pageable> = {
  [F in keyof RangeFields<O> & string]: { field: F, first: RangeFields<O>[F], last: RangeFields<O>[F] }
}[keyof RangeFields<O> & string]

/** The Range header of a page request; the value percent-encoded (`#` → `%23`, space → `%20`). */
export function rangeHeader (range: { field: string, value?: string | number, limit?: number, offset?: number, order?: RangeOrder }): string {
  const { field, value, limit, offset, order } = range
  return [
    value === undefined ? field : `${field} ${encodeURIComponent(String(value))}`,
    ...(limit === undefined ? [] : [`limit ${limit}`]),
    ...(offset === undefined ? [] : [`offset ${offset}`]),
    ...(order === undefined ? [] : [`order ${order}`])
  ].join('; ')
}

/** A field's value read from a header: percent-decoded, then a number for an integer field. */
function decodeValue (type: 'string' | 'integer', raw: string): string | number {
  const text = decodeURIComponent(raw)
  if (type === 'string') return text
  const value = Number(text)
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) throw new SyntaxError(`${JSON.stringify(text)} is not an integer`)
  return value
}

/** The field of a header and its type, for an operation. */
function fieldOf (operation: Pageable, field: string, header: string): 'string' | 'integer' {
  const fields: Readonly<Record<string, 'string' | 'integer'>> = rangeFields[operation]
  const type = fields[field]
  if (type === undefined) throw new SyntaxError(`${JSON.stringify(header)}: ${JSON.stringify(field)} is not a field of ${operation}`)
  return type
}

/** A count of a Range header (limit, offset): a decimal integer, 0 or more. */
function count (name: string, text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new SyntaxError(`${name} ${JSON.stringify(text)} is not a count`)
  return Number(text)
}

/** Reads a Range header value (a page's Next-Range) back into a range of `operation`; throws a SyntaxError on anything else. */
export function parseRangeHeader<O extends Pageable> (operation: O, header: string): RangeOf<O> {
  const [head = '', ...options] = header.split(';')
  const [field = '', raw, ...rest] = head.trim().split(/ +/)
  const type = fieldOf(operation, field, header)
  if (rest.length > 0) throw new SyntaxError(`${JSON.stringify(header)} has more than a field and a value`)
  const range: { field: string, value?: string | number, limit?: number, offset?: number, order?: RangeOrder } = { field }
  if (raw !== undefined) range.value = decodeValue(type, raw)
  for (const option of options) {
    const [name, arg = '', ...extra] = option.trim().split(/ +/)
    if (extra.length > 0) throw new SyntaxError(`${JSON.stringify(option)} is not "<option> <arg>"`)
    if (name === 'limit' || name === 'offset') range[name] = count(name, arg)
    else if (name === 'order' && (arg === 'asc' || arg === 'desc')) range.order = arg
    else throw new SyntaxError(`${JSON.stringify(option)} is not an option of a Range`)
  }
  return range as RangeOf<O>
}

/**
 * Reads a Content-Range value back: `name Yellow..White` → `{ field: 'name', first: 'Yellow', last: 'White' }`.
 * The values are percent-encoded, `.` aside: they split at the first `..`.
 */
export function parseContentRange<O extends Pageable> (operation: O, header: string): ContentRange<O> {
  const space = header.indexOf(' ')
  const dots = header.indexOf('..', space)
  if (space < 0 || dots < 0) throw new SyntaxError(`${JSON.stringify(header)} is not "<field> <first>..<last>"`)
  const field = header.slice(0, space)
  const type = fieldOf(operation, field, header)
  return { field, first: decodeValue(type, header.slice(space + 1, dots)), last: decodeValue(type, header.slice(dots + 2)) } as ContentRange<O>
}
