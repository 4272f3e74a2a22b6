import { parseRange, type Range, type RangeFieldGrammar, type RangeOptions } from './grammar.js'
import { rangePattern } from './pattern.js'

/**
 * Pages of a collection by its key, the `id` (docs/contract.md, Pagination by Range): the same
 * header and answer as /colors, on the one field every store keeps in order. Ids are unique, so a
 * page is a run of consecutive ids in the order asked, found from the value in O(log n).
 */

/** The field a collection's Range is on. */
export const ID_FIELD = 'id'

/**
 * limit 100 and offset 0 as /colors; order `asc`, not servant-pagination's `desc`: ascending ids
 * are the order of the whole list (`GET` without a Range), so that a client paging from the start
 * reads what the list reads, and new items, which take the largest ids, come last.
 */
export const ID_RANGE_DEFAULTS: Readonly<RangeOptions> = { limit: 100, offset: 0, order: 'asc' }

const ID_GRAMMAR: ReadonlyMap<string, RangeFieldGrammar> = new Map([[ID_FIELD, { type: 'integer', defaults: ID_RANGE_DEFAULTS }]])

/** The Range headers parseIdRange accepts, as a regular expression (lib/range/pattern.ts), for the document. */
export const ID_RANGE_PATTERN = rangePattern(ID_GRAMMAR)

/** A Range header on a collection, parsed: throws the 400 errors of lib/range/grammar.ts. */
export function parseIdRange (header: string): Range {
  return parseRange(header, ID_GRAMMAR)
}

/** Where a page lies in a collection: the ids of its first and last items, and whether it holds `limit` items. */
export interface KeyedPage {
  /** Absent on an empty page. */
  first?: number
  last?: number
  /** The page holds `limit` items: there may be more after it (the next range). */
  full: boolean
}

/** The page's positions in keys sorted ascending: `length` items from `start`, by `step`. */
export interface KeyedSlice {
  start: number
  length: number
  step: 1 | -1
}

/** The number of keys below `value` (ascending, unique): a binary search. */
export function countBelow (keys: ArrayLike<number>, value: number): number {
  let low = 0
  let high = keys.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((keys[mid] as number) < value) low = mid + 1
    else high = mid
  }
  return low
}

/**
 * The page a range selects in unique keys sorted ascending, in O(log n): the keys before the value
 * in the order asked are dropped, then `offset` skipped and `limit` taken (lib/range/select.ts,
 * `selectRange`, for a field whose values are all different).
 */
export function keyedSlice (keys: ArrayLike<number>, range: Range): KeyedSlice {
  const n = keys.length
  const value = range.value as number | undefined
  if (range.order === 'asc') {
    const start = Math.min((value === undefined ? 0 : countBelow(keys, value)) + range.offset, n)
    return { start, length: Math.min(range.limit, n - start), step: 1 }
  }
  // The position of the last key not above the value (integers: below value + 1).
  const top = value === undefined ? n - 1 : countBelow(keys, value + 1) - 1
  const start = top - range.offset
  return { start, length: Math.max(0, Math.min(range.limit, start + 1)), step: -1 }
}

/** The ids of a slice's first and last items, and whether it is full. */
export function keyedPage (keys: ArrayLike<number>, range: Range, slice: KeyedSlice): KeyedPage {
  if (slice.length === 0) return { full: false }
  return {
    first: keys[slice.start] as number,
    last: keys[slice.start + slice.step * (slice.length - 1)] as number,
    full: slice.length === range.limit
  }
}

/**
 * The Range of the page after a full one: from its last id, skipping the one item that has it,
 * which this page returned; no next range after a page shorter than its limit, or an empty one.
 * This is selectRange's rule for unique values: the run of the last value is one item long, and
 * when the last id is the value asked for, the page is that one item, after an offset of 0.
 */
export function nextKeyedRange (range: Range, page: KeyedPage): Range | undefined {
  if (!page.full || page.last === undefined) return undefined
  return { field: range.field, value: page.last, limit: range.limit, offset: 1, order: range.order }
}
