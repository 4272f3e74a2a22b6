import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  contentRangeHeader, nextRangeHeader, parseRange, RANGE_ORDERS,
  type Range, type RangeFieldGrammar, type RangeOptions
} from './grammar.js'
import { rangePattern } from './pattern.js'
import { indexField, selectRange, type FieldIndex, type RangePage } from './select.js'

/** A rangeable field as a route declares it: its type, how to read it from an item, its default options. */
export type RangeField<Item> = (
  | { type: 'string', value: (item: Item) => string }
  | { type: 'integer', value: (item: Item) => number }
) & Partial<RangeOptions>

/** Defaults of every field of a collection (servant-pagination's: limit 100, offset 0, order desc). */
export interface RangeableOptions extends Partial<RangeOptions> {
  /** The field of the default range, used when a request has no Range header. Default: the first field declared. */
  defaultField?: string
}

/** A collection indexed once for Range requests. */
export interface RangeableCollection<Item> {
  /** How many items the collection has (the route's Total-Count). */
  readonly size: number
  /** The rangeable fields, in declaration order (the Accept-Ranges header). */
  readonly fields: readonly string[]
  /** The Range headers of these fields as a regular expression (lib/range/pattern.ts), for the route's document. */
  readonly pattern: string
  /** The page a Range header value selects; absent means the default range. Throws a 400 error when malformed. */
  select (header: string | undefined): RangePage<Item>
  /**
   * Answers a request's Range header: selects its page, sets Accept-Ranges, Content-Range and
   * Next-Range on the reply, and returns the page's items. A malformed header throws a 400 error
   * (Accept-Ranges is set on it too).
   */
  page (request: FastifyRequest, reply: FastifyReply): Item[]
}

const DEFAULTS: RangeOptions = { limit: 100, offset: 0, order: 'desc' }

/** A field name must be a single token of the grammar. */
const FIELD_NAME = /^[^\s;,]+$/

/** The options given (an option set to undefined is not given), checked. */
function givenOptions (where: string, { limit, offset, order }: Partial<RangeOptions>): Partial<RangeOptions> {
  const given: Partial<RangeOptions> = {}
  for (const [name, value] of [['limit', limit], ['offset', offset]] as const) {
    if (value === undefined) continue
    if (!(Number.isSafeInteger(value) && value >= 0)) throw new TypeError(`${where}: ${name} must be a non-negative safe integer, got ${value}`)
    given[name] = value
  }
  if (order !== undefined) {
    if (!RANGE_ORDERS.includes(order)) throw new TypeError(`${where}: order must be asc or desc, got ${order}`)
    given.order = order
  }
  return given
}

/** The values of a field for every item, checked against the field's type once, at registration. */
function readKeys<Item> (items: readonly Item[], name: string, field: RangeField<Item>): Array<string | number> {
  const keys: Array<string | number> = new Array(items.length)
  for (let i = 0; i < items.length; i++) {
    const value = field.value(items[i] as Item)
    const valid = field.type === 'string' ? typeof value === 'string' : Number.isSafeInteger(value)
    if (!valid) throw new TypeError(`rangeable field ${name}: item ${i} has ${String(value)}, not a ${field.type === 'string' ? 'string' : 'safe integer'}`)
    keys[i] = field.type === 'integer' ? (value as number) + 0 : value
  }
  return keys
}

/**
 * Indexes `items` once by each rangeable field, for routes that page them by the Range header
 * (docs/contract.md, "Pages of /colors"). Throws a TypeError for a declaration that cannot work.
 */
export function rangeable<Item> (
  items: readonly Item[],
  fields: Readonly<Record<string, RangeField<Item>>>,
  options: RangeableOptions = {}
): RangeableCollection<Item> {
  const defaults = givenOptions('rangeable', options)
  const names = Object.keys(fields)
  // A copy: the index stays right whatever the caller does to its array later.
  const list = items.slice()
  const grammar = new Map<string, RangeFieldGrammar>()
  const indexes = new Map<string, FieldIndex>()
  for (const name of names) {
    if (!FIELD_NAME.test(name)) throw new TypeError(`rangeable field name ${JSON.stringify(name)} must be one token: no spaces, ";" or ","`)
    const field = fields[name] as RangeField<Item>
    const own = givenOptions(`rangeable field ${name}`, field)
    grammar.set(name, { type: field.type, defaults: { ...DEFAULTS, ...defaults, ...own } })
    indexes.set(name, indexField(readKeys(list, name, field)))
  }
  const fallbackField = options.defaultField ?? names[0]
  if (fallbackField === undefined || !grammar.has(fallbackField)) {
    throw new TypeError(`rangeable: the default field ${String(fallbackField)} is not one of the fields: ${names.join(', ')}`)
  }
  const fallback: Range = { field: fallbackField, ...grammar.get(fallbackField)!.defaults }
  const acceptRanges = names.join(',')

  function select (header: string | undefined): RangePage<Item> {
    const range = header === undefined ? fallback : parseRange(header, grammar)
    return selectRange(list, indexes.get(range.field)!, range)
  }

  return {
    size: list.length,
    fields: names,
    pattern: rangePattern(grammar),
    select,
    page (request, reply) {
      reply.header('accept-ranges', acceptRanges)
      const page = select(request.headers.range)
      if (page.first !== undefined && page.last !== undefined) {
        reply.header('content-range', contentRangeHeader(page.field, page.first, page.last))
      }
      if (page.next !== undefined) reply.header('next-range', nextRangeHeader(page.next))
      return page.items
    }
  }
}
