import type { Range, RangeValue } from './grammar.js'

/**
 * The selection of servant-pagination (docs/contract.md, Pagination by Range) over a collection indexed once:
 * a request costs O(log n + limit), never a sort.
 */

/**
 * One field of a collection, sorted once: the positions of the items in ascending and in
 * descending order of the field's value, ties in collection order both ways.
 */
export interface FieldIndex {
  /** The field's value of each item, by position in the collection. */
  readonly keys: readonly RangeValue[]
  readonly asc: Uint32Array
  readonly desc: Uint32Array
}

/** A page: its items, the field values of the first and last, and the range of the next page. */
export interface RangePage<Item> {
  /** The field the range is on. */
  field: string
  items: Item[]
  first?: RangeValue
  last?: RangeValue
  /** Absent on an empty page and on a page shorter than the limit: there is nothing after it. */
  next?: Range
}

/**
 * Sorts a field once. `keys` are all strings (compared by UTF-16 code units) or all numbers.
 * The descending order is derived from the ascending one in O(n): its runs of equal values
 * reversed, each run keeping collection order.
 */
export function indexField (keys: readonly RangeValue[]): FieldIndex {
  const n = keys.length
  const positions = new Uint32Array(n)
  for (let i = 0; i < n; i++) positions[i] = i
  const asc = positions.sort((a, b) => {
    const ka = keys[a] as RangeValue
    const kb = keys[b] as RangeValue
    return ka < kb ? -1 : ka > kb ? 1 : a - b
  })

  const desc = new Uint32Array(n)
  let written = 0
  let end = n
  while (end > 0) {
    const value = keys[asc[end - 1] as number]
    let start = end - 1
    while (start > 0 && keys[asc[start - 1] as number] === value) start--
    desc.set(asc.subarray(start, end), written)
    written += end - start
    end = start
  }
  return { keys, asc, desc }
}

/**
 * Where a range that starts at `value` (inclusive) begins in the field's order: the number of
 * items that come before `value` in that order. A binary search over the ascending index.
 */
export function startPosition (index: FieldIndex, value: RangeValue, order: Range['order']): number {
  const { keys, asc } = index
  let low = 0
  let high = asc.length
  // asc: the first item not below value. desc: the first item above value, counted from the end.
  while (low < high) {
    const mid = (low + high) >>> 1
    const key = keys[asc[mid] as number] as RangeValue
    if (order === 'asc' ? key < value : key <= value) low = mid + 1
    else high = mid
  }
  return order === 'asc' ? low : asc.length - low
}

/**
 * The page of a range: drop the items before `value` in the field's order, skip `offset`, take
 * `limit`. The next range starts at the page's last value; its offset skips what this page
 * already returned of that value: the previous offset plus the page length when the last value
 * is the requested one, else the number of items at the end of the page that have that value.
 * An empty string cannot be written as a value (`name ;limit 2` has none), so after an empty last
 * value the next range has no value and the page's end as its offset.
 */
export function selectRange<Item> (items: readonly Item[], index: FieldIndex, range: Range): RangePage<Item> {
  const order = range.order === 'asc' ? index.asc : index.desc
  const n = order.length
  const start = range.value === undefined ? 0 : startPosition(index, range.value, range.order)
  const from = Math.min(start + range.offset, n)
  const to = Math.min(from + range.limit, n)
  const page: Item[] = new Array(to - from)
  for (let i = from; i < to; i++) page[i - from] = items[order[i] as number] as Item
  if (page.length === 0) return { field: range.field, items: page }

  const { keys } = index
  const first = keys[order[from] as number] as RangeValue
  const last = keys[order[to - 1] as number] as RangeValue
  if (page.length < range.limit) return { field: range.field, items: page, first, last }

  const next: Range = { field: range.field, limit: range.limit, offset: 0, order: range.order }
  if (last === '') {
    next.offset = to
    return { field: range.field, items: page, first, last, next }
  }
  next.value = last
  if (last === range.value) {
    next.offset = range.offset + page.length
  } else {
    while (next.offset < page.length && keys[order[to - 1 - next.offset] as number] === last) next.offset++
  }
  return { field: range.field, items: page, first, last, next }
}
