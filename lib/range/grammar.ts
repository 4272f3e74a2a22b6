import { parseWireInteger } from '../wire.js'
import { InvalidRange, InvalidRangeOptions, InvalidRangeOrder, InvalidRangeValue, NegativeLimit, NegativeOffset } from '../error-codes.js'

/**
 * The Range header of servant-pagination (docs/contract.md, Pagination by Range), as plain functions:
 * `<field> [<value>][; offset <o>][; limit <l>][; order <asc|desc>]` in, and the
 * `Content-Range` and `Next-Range` values out.
 */

export type RangeOrder = 'asc' | 'desc'
export type RangeFieldType = 'string' | 'integer'
/** A field's value: a string for a `string` field, a safe integer for an `integer` field. */
export type RangeValue = string | number

export const RANGE_ORDERS: readonly RangeOrder[] = ['asc', 'desc']

/** The options of a range; each field of a collection has defaults for all three. */
export interface RangeOptions {
  limit: number
  offset: number
  order: RangeOrder
}

/** A parsed range: the field, the optional start value (inclusive), and every option. */
export interface Range extends RangeOptions {
  field: string
  value?: RangeValue
}

/** What the grammar needs to know of a rangeable field: its type and its default options. */
export interface RangeFieldGrammar {
  type: RangeFieldType
  defaults: RangeOptions
}

const SAFE_RANGE = `between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`

/** A piece of the header, quoted for an error message: JSON string syntax (controls escaped), shortened. */
function quote (text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
}

/** The space-separated tokens of a piece; extra spaces are harmless. */
function tokens (piece: string): string[] {
  return piece.split(' ').filter((token) => token !== '')
}

function parseValue (field: string, type: RangeFieldType, raw: string): RangeValue {
  let text: string
  try {
    text = decodeURIComponent(raw)
  } catch {
    throw new InvalidRangeValue(`the ${field} value ${quote(raw)} is not valid percent-encoded UTF-8`)
  }
  if (type === 'string') return text
  const value = parseWireInteger(text)
  if (value === undefined) {
    throw new InvalidRangeValue(`the ${field} value must be a decimal integer ${SAFE_RANGE}, got ${quote(text)}`)
  }
  return value
}

function parseCount (name: 'limit' | 'offset', arg: string): number {
  const value = parseWireInteger(arg)
  if (value === undefined) {
    throw new InvalidRangeOptions(`${name} must be a decimal integer between 0 and ${Number.MAX_SAFE_INTEGER}, got ${quote(arg)}`)
  }
  if (value < 0) throw name === 'limit' ? new NegativeLimit(value) : new NegativeOffset(value)
  return value
}

function parseOrder (arg: string): RangeOrder {
  if (arg === 'asc' || arg === 'desc') return arg
  throw new InvalidRangeOrder(`order must be asc or desc (lower case), got ${quote(arg)}`)
}

/**
 * Parses a Range header against the rangeable fields of a collection; missing options take the
 * field's defaults. Throws one of the 400 errors above, naming the problem. The checks run in
 * this order: the field, the shape of every option, the value, then limit, offset and order.
 *
 * `name Green; order asc; offset 1` → `{ field: 'name', value: 'Green', limit: 100, offset: 1, order: 'asc' }`
 */
export function parseRange (header: string, fields: ReadonlyMap<string, RangeFieldGrammar>): Range {
  // Plain loops and locals: this runs for every paged request, and array destructuring, a Map of
  // options and an object spread showed in GET /colors's CPU profile (figures: bench/README.md).
  const pieces = header.split(';')
  const head = pieces[0] as string
  const first = tokens(head)
  if (first.length === 0) {
    throw new InvalidRange(header.trim() === ''
      ? `the header is empty; expected "<field> [<value>][; <option> <arg>]…" with a field of ${fieldNames(fields)}`
      : `no field before the first ";"; expected one of ${fieldNames(fields)}`)
  }
  const field = first[0] as string
  const grammar = fields.get(field)
  if (grammar === undefined) {
    throw new InvalidRange(`unknown field ${quote(field)}; the fields are ${fieldNames(fields)} (case-sensitive)`)
  }
  if (first.length > 2) {
    throw new InvalidRange(`${quote(head.trim())} has more than a field and a value; percent-encode spaces in a value as %20`)
  }

  // Each later piece is exactly `<option> <arg>`; the first occurrence of an option wins, and
  // options the grammar does not know are left alone.
  let limit: string | undefined
  let offset: string | undefined
  let order: string | undefined
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i] as string
    const option = tokens(piece)
    if (option.length !== 2) {
      throw new InvalidRangeOptions(option.length === 0
        ? 'an option is empty (nothing between two ";", or after the last one)'
        : `${quote(piece.trim())} is not "<option> <arg>"`)
    }
    const arg = option[1] as string
    switch (option[0]) {
      case 'limit': limit ??= arg; break
      case 'offset': offset ??= arg; break
      case 'order': order ??= arg; break
    }
  }

  const { defaults } = grammar
  const range: Range = { field, limit: defaults.limit, offset: defaults.offset, order: defaults.order }
  const raw = first[1]
  if (raw !== undefined) range.value = parseValue(field, grammar.type, raw)
  if (limit !== undefined) range.limit = parseCount('limit', limit)
  if (offset !== undefined) range.offset = parseCount('offset', offset)
  if (order !== undefined) range.order = parseOrder(order)
  return range
}

/** The field names of a collection, for an error message. */
function fieldNames (fields: ReadonlyMap<string, RangeFieldGrammar>): string {
  return [...fields.keys()].join(', ')
}

/** Matches a lone surrogate, which has no UTF-8 form. */
const LONE_SURROGATE = /\p{Cs}/gu

/**
 * A value as the response headers write it: percent-encoded UTF-8, keeping
 * `A-Z a-z 0-9 - _ . ! ~ * ' ( )` (`#` → `%23`, space → `%20`). A lone surrogate, which
 * UTF-8 cannot carry, is written as U+FFFD.
 */
export function encodeRangeValue (value: RangeValue): string {
  const text = String(value)
  try {
    return encodeURIComponent(text)
  } catch {
    return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'))
  }
}

/** `Content-Range: <field> <first>..<last>`, the field values of the first and last item returned. */
export function contentRangeHeader (field: string, first: RangeValue, last: RangeValue): string {
  return `${field} ${encodeRangeValue(first)}..${encodeRangeValue(last)}`
}

/** `Next-Range: <field> <value>;limit <l>;offset <o>;order <asc|desc>`, a Range header value (the value is optional). */
export function nextRangeHeader (next: Range): string {
  const value = next.value === undefined ? '' : ` ${encodeRangeValue(next.value)}`
  return `${next.field}${value};limit ${next.limit};offset ${next.offset};order ${next.order}`
}

/**
 * Reads a Content-Range value back: `{ field, first, last }`, the values decoded to the field's
 * type. The values are split at the first `..`: `.` is not percent-encoded, so a first value that
 * holds `..` or ends with `.` cannot be read back (the last value can be anything).
 */
export function parseContentRange (header: string, fields: ReadonlyMap<string, RangeFieldGrammar>): { field: string, first: RangeValue, last: RangeValue } {
  const space = header.indexOf(' ')
  const field = header.slice(0, space)
  const grammar = fields.get(field)
  const values = header.slice(space + 1)
  const dots = values.indexOf('..')
  if (space < 0 || grammar === undefined || dots < 0) {
    throw new InvalidRange(`${quote(header)} is not "<field> <first>..<last>"`)
  }
  return {
    field,
    first: parseValue(field, grammar.type, values.slice(0, dots)),
    last: parseValue(field, grammar.type, values.slice(dots + 2))
  }
}
