import assert from 'node:assert/strict'
import t from 'tap'
import fc from 'fast-check'
import {
  contentRangeHeader, nextRangeHeader, parseContentRange, parseRange,
  type Range, type RangeFieldGrammar, type RangeOrder, type RangeValue
} from '../../../lib/range/grammar.js'
import { indexField, selectRange, startPosition, type RangePage } from '../../../lib/range/select.js'
import type { Color } from '../../../schemas/color.js'
import COLORS from '../../../routes/colors/colors.json' with { type: 'json' }
import { SEED, propertyRuns } from '../../helpers/property-runs.js'

/**
 * The selection as docs/contract.md (Pagination by Range) words it, done the slow way on every call: a stable sort by the
 * field in the given order, a linear scan to the start value, skip, take, and the Next-Range rule.
 */
function reference<Item> (items: readonly Item[], key: (item: Item) => RangeValue, range: Range): RangePage<Item> {
  const compare = (a: RangeValue, b: RangeValue) => (a < b ? -1 : a > b ? 1 : 0) * (range.order === 'asc' ? 1 : -1)
  const sorted = items.map((item, i) => ({ item, i })).sort((a, b) => compare(key(a.item), key(b.item)) || a.i - b.i).map(({ item }) => item)
  let start = 0
  if (range.value !== undefined) {
    while (start < sorted.length && compare(key(sorted[start] as Item), range.value) < 0) start++
  }
  const items_ = sorted.slice(start + range.offset, start + range.offset + range.limit)
  const page: RangePage<Item> = { field: range.field, items: items_ }
  if (items_.length === 0) return page
  const first = key(items_[0] as Item)
  const last = key(items_[items_.length - 1] as Item)
  Object.assign(page, { first, last })
  if (items_.length === range.limit) {
    let offset = 0
    if (last === '') offset = start + range.offset + items_.length
    else if (range.value !== undefined && last === range.value) offset = range.offset + items_.length
    else for (let i = items_.length - 1; i >= 0 && key(items_[i] as Item) === last; i--) offset++
    page.next = { field: range.field, ...(last === '' ? {} : { value: last }), limit: range.limit, offset, order: range.order }
  }
  return page
}

/** The items in the field's order, from the start value on: what following Next-Range must visit. */
function sortedFrom<Item> (items: readonly Item[], key: (item: Item) => RangeValue, field: string, order: RangeOrder, value?: RangeValue): Item[] {
  const range: Range = { field, order, offset: 0, limit: items.length }
  if (value !== undefined) range.value = value
  return reference(items, key, range).items
}

const DEFAULTS = { limit: 100, offset: 0, order: 'desc' } as const

/** An item of the random collections: a string field s and an integer field n, both with many ties. */
interface Row { s: string, n: number }

const COLOR_KEYS: Record<string, { type: 'string' | 'integer', key: (color: Color) => RangeValue }> = {
  name: { type: 'string', key: (color) => color.name },
  hex: { type: 'string', key: (color) => color.hex },
  rgb: { type: 'integer', key: (color) => color.rgb.reduce((sum, c) => sum + c, 0) }
}
const COLOR_GRAMMAR = new Map<string, RangeFieldGrammar>(Object.entries(COLOR_KEYS).map(([name, { type }]) =>
  [name, { type, defaults: { ...DEFAULTS, limit: name === 'rgb' ? 5 : 100 } }]))
const COLOR_INDEX = Object.fromEntries(Object.entries(COLOR_KEYS).map(([name, { key }]) => [name, indexField(COLORS.map(key))]))

/** Follows Next-Range from `first` to the end, through the header text; returns every item seen and the pages. */
function follow<Item> (items: readonly Item[], index: ReturnType<typeof indexField>, grammar: ReadonlyMap<string, RangeFieldGrammar>, first: Range) {
  const seen: Item[] = []
  let range: Range | undefined = first
  let pages = 0
  while (range !== undefined) {
    if (++pages > items.length + 2) throw new Error(`Next-Range does not advance: ${JSON.stringify(range)}`)
    const page: RangePage<Item> = selectRange(items, index, range)
    seen.push(...page.items)
    range = page.next === undefined ? undefined : parseRange(nextRangeHeader(page.next), grammar)
  }
  return { seen, pages }
}

t.test('a field is sorted once, ties in collection order in both orders', async (t) => {
  const index = indexField(['b', 'a', 'b', 'a', 'c', 'b'])
  t.same([...index.asc], [1, 3, 0, 2, 5, 4], 'asc')
  t.same([...index.desc], [4, 0, 2, 5, 1, 3], 'desc: runs reversed, each run in collection order')
  const numbers = indexField([3, -1, 3, 0, -1])
  t.same([...numbers.asc], [1, 4, 3, 0, 2])
  t.same([...numbers.desc], [0, 2, 3, 1, 4])
  t.same([...indexField([]).asc], [])
  t.same([...indexField(['x']).desc], [0])
  t.same([...indexField(['B', 'a', 'É', 'Z']).asc], [0, 3, 1, 2], 'strings compare by UTF-16 code units: B < Z < a < É')
  fc.assert(fc.property(fc.array(fc.integer({ min: -3, max: 3 }), { maxLength: 40 }), (keys) => {
    const positions = keys.map((_, i) => i)
    const stable = (sign: number) => [...positions].sort((a, b) => sign * ((keys[a] as number) - (keys[b] as number)) || a - b)
    const index = indexField(keys)
    assert.deepEqual([...index.asc], stable(1))
    assert.deepEqual([...index.desc], stable(-1))
  }), { seed: SEED })
})

t.test('the start of a value is found by binary search, in either order', async (t) => {
  const index = indexField([1, 3, 3, 5])
  // asc order is 1 3 3 5: how many items come before the value
  const asc: Array<[number, number]> = [[-9, 0], [0, 0], [1, 0], [2, 1], [3, 1], [4, 3], [5, 3], [6, 4], [1e15, 4]]
  for (const [value, start] of asc) t.equal(startPosition(index, value, 'asc'), start, `asc ${value}`)
  // desc order is 5 3 3 1
  const desc: Array<[number, number]> = [[1e15, 0], [6, 0], [5, 0], [4, 1], [3, 1], [2, 3], [1, 3], [0, 4], [-9, 4]]
  for (const [value, start] of desc) t.equal(startPosition(index, value, 'desc'), start, `desc ${value}`)
  t.equal(startPosition(indexField([]), 3, 'asc'), 0, 'empty collection')
  t.equal(startPosition(indexField([]), 3, 'desc'), 0, 'empty collection')
})

t.test('selection on the 59 colours', async (t) => {
  const select = (header: string) => {
    const range = parseRange(header, COLOR_GRAMMAR)
    const page = selectRange(COLORS, COLOR_INDEX[range.field]!, range)
    return { ...page, names: page.items.map((color) => color.name) }
  }

  let page = select('name; limit 2')
  t.same(page.names, ['Yellow', 'White'])
  t.same(page.next, { field: 'name', value: 'White', limit: 2, offset: 1, order: 'desc' })

  page = select('name Green; order asc; offset 1')
  t.same(page.names.slice(0, 3), ['GreenYellow', 'Grey', 'HotPink'], 'Green itself is skipped by offset 1')
  t.equal(page.items.length, 59 - COLORS.filter((color) => color.name < 'Green').length - 1)
  t.equal(page.next, undefined, 'shorter than the limit: no next range')

  page = select('name; order asc; limit 6')
  t.same(page.names, ['Aqua', 'Black', 'Blue', 'BlueViolet', 'CadetBlue', 'CadetBlue'])
  t.same(page.next, { field: 'name', value: 'CadetBlue', limit: 6, offset: 2, order: 'asc' }, 'no value: the count of the last value at the end of the page')

  page = select('name Purple; limit 2; order asc')
  t.same(page.items.map((color) => color.hex), ['#800080', '#8700ff'], 'ties in collection order')
  t.same(page.next, { field: 'name', value: 'Purple', limit: 2, offset: 2, order: 'asc' }, 'the requested value is the last: the offset accumulates')
  page = select(nextRangeHeader(page.next!))
  t.same(page.items.map((color) => color.hex), ['#af00ff', '#ff0000'], 'the third Purple, then Red')
  t.same(page.next, { field: 'name', value: 'Red', limit: 2, offset: 1, order: 'asc' }, 'a new last value: the count of it at the end of the page')
  page = select(nextRangeHeader(page.next!))
  t.same(page.names, ['RosyBrown', 'SandyBrown'])
  page = select('name; order asc; offset 5; limit 1')
  t.same(page.names, ['CadetBlue'], 'the second CadetBlue')
  t.same(page.next, { field: 'name', value: 'CadetBlue', limit: 1, offset: 1, order: 'asc' },
    'the count is of the page\'s items only, as the contract words it, though the run of CadetBlue began before the page')
  page = select('name Purple; limit 1; offset 1; order asc')
  t.same(page.items.map((color) => color.hex), ['#8700ff'])
  t.same(page.next, { field: 'name', value: 'Purple', limit: 1, offset: 2, order: 'asc' })

  page = select('name DarkRed; limit 3')
  t.same(page.names, ['DarkRed', 'DarkRed', 'DarkOrange'])
  t.same(page.next?.offset, 1)
  page = select('name Darkred; limit 3; order asc')
  t.same(page.names, ['Fuchsia', 'Green', 'GreenYellow'], 'a value that does not exist: the items from where it would be (Darkr > DarkV)')
  t.same(page.next, { field: 'name', value: 'GreenYellow', limit: 3, offset: 1, order: 'asc' })
  page = select('name Gr; order asc; limit 1')
  t.same(page.names, ['Green'])
  page = select('name Zzz; order asc')
  t.same(page.items, [], 'past the end')
  t.equal(page.first, undefined)
  t.equal(page.next, undefined)
  t.same(select('name Zzz').items.length, 59, 'desc from above the largest: everything')

  t.same(select('name; offset 58').names, ['Aqua'], 'the last one')
  t.same(select('name; offset 59').items, [], 'offset at the end')
  t.same(select('name; offset 9007199254740991').items, [], 'offset far past the end')
  t.same(select('name Red; offset 9007199254740991; order asc').items, [])
  const none = select('name; limit 0')
  t.same(none.items, [], 'limit 0: an empty page')
  t.equal(none.next, undefined, 'limit 0: no next range')
  t.same(select('name; limit 9007199254740991').items.length, 59, 'a huge limit: everything')

  t.same(select('rgb').items.map((color) => color.rgb.reduce((a, b) => a + b)), [765, 605, 605, 576, 565], 'rgb: default limit 5')
  t.same(select('rgb 1000').items.length, 5, 'rgb above every sum, desc: from the largest')
  t.same(select('rgb 1000; order asc').items, [], 'rgb above every sum, asc: nothing')
  t.same(select('rgb -5; order asc; limit 1').names, ['Black'], 'rgb below every sum, asc: from the smallest')
  t.same(select('rgb -5').items, [], 'rgb below every sum, desc: nothing')
  t.same(select('rgb 256; order asc; limit 3').items.map((color) => color.hex), ['#808000', '#800080', '#008080'], 'rgb ties in collection order')
  t.same(select('rgb 257; order asc; limit 2').items.map((color) => color.hex), ['#870087', '#00af87'], 'an unreachable sum starts at the next one (270)')
  t.same(select('hex %23808080; limit 2').items.map((color) => color.hex), ['#808080', '#808000'])
  t.same(select('hex #00FFFF; limit 1').items.map((color) => color.hex), ['#008080'], 'hex compares case-sensitively: #00FFFF sorts before #00d7d7')
})

t.test('after an empty last value, which cannot be written, the next range has no value and an absolute offset', async (t) => {
  const grammar = new Map<string, RangeFieldGrammar>([['s', { type: 'string', defaults: DEFAULTS }]])
  const keys = ['b', '', 'a', '', '']
  const index = indexField(keys)
  let page = selectRange(keys, index, { field: 's', limit: 3, offset: 0, order: 'desc' })
  t.same(page.items, ['b', 'a', ''])
  t.same(page.next, { field: 's', limit: 3, offset: 3, order: 'desc' })
  t.equal(nextRangeHeader(page.next!), 's;limit 3;offset 3;order desc')
  page = selectRange(keys, index, parseRange(nextRangeHeader(page.next!), grammar))
  t.same(page.items, ['', ''], 'the two other empty values, not the first one again')
  page = selectRange(keys, index, { field: 's', limit: 2, offset: 0, order: 'asc' })
  t.same(page.next, { field: 's', limit: 2, offset: 2, order: 'asc' })
  t.same(selectRange(keys, index, page.next!).items, ['', 'a'])
  t.equal(contentRangeHeader('s', '', 'a'), 's ..a')
})

t.test('the selection is the reference selection, for any collection and range', async (t) => {
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'B', 'é', '.'), maxLength: 3 })
  const keys: Record<string, (row: Row) => RangeValue> = { s: (row) => row.s, n: (row) => row.n }
  fc.assert(fc.property(
    fc.array(fc.record({ s: text, n: fc.integer({ min: -3, max: 3 }) }), { maxLength: 40 }),
    fc.constantFrom('s', 'n'),
    fc.constantFrom<RangeOrder>('asc', 'desc'),
    fc.option(text, { nil: undefined }),
    fc.option(fc.integer({ min: -4, max: 4 }), { nil: undefined }),
    fc.nat(45), fc.nat(45),
    (items, field, order, string, integer, offset, limit) => {
      const key = keys[field]!
      const range: Range = { field, order, offset, limit }
      const value = field === 's' ? string : integer
      if (value !== undefined) range.value = value
      assert.deepStrictEqual(selectRange(items, indexField(items.map(key)), range), reference(items, key, range))
    }
  ), { numRuns: propertyRuns(500), seed: SEED })
  t.pass('fast-check found no counter-example')
})

t.test('property 1: following Next-Range from the first page visits every colour once, in order', async (t) => {
  const values: Record<string, fc.Arbitrary<RangeValue>> = {
    name: fc.oneof(fc.constantFrom(...COLORS.map((color) => color.name)), fc.string({ maxLength: 6 })),
    hex: fc.oneof(fc.constantFrom(...COLORS.map((color) => color.hex)), fc.string({ maxLength: 7 })),
    rgb: fc.oneof(fc.constantFrom(...COLORS.map(COLOR_KEYS.rgb!.key)), fc.integer({ min: -10, max: 1000 }))
  }
  fc.assert(fc.property(
    fc.constantFrom('name', 'hex', 'rgb').chain((field) => fc.tuple(fc.constant(field), fc.option(values[field]!, { nil: undefined }))),
    fc.constantFrom<RangeOrder>('asc', 'desc'),
    fc.integer({ min: 1, max: 70 }),
    ([field, value], order, limit) => {
      const first: Range = { field, order, limit, offset: 0 }
      if (value !== undefined) first.value = value
      const { seen, pages } = follow(COLORS, COLOR_INDEX[field]!, COLOR_GRAMMAR, first)
      const want = sortedFrom(COLORS, COLOR_KEYS[field]!.key, field, order, value)
      assert.deepStrictEqual(seen, want)
      assert.ok(pages <= Math.floor(want.length / limit) + 1, 'no empty page but the last')
    }
  ), { numRuns: propertyRuns(500), seed: SEED })
  t.pass('fast-check found no counter-example')
})

t.test('property 1 on random collections with many ties', async (t) => {
  const grammar = new Map<string, RangeFieldGrammar>([['s', { type: 'string', defaults: DEFAULTS }], ['n', { type: 'integer', defaults: DEFAULTS }]])
  const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '#', '.', 'é'), maxLength: 2 })
  const keys: Record<string, (row: Row) => RangeValue> = { s: (row) => row.s, n: (row) => row.n }
  fc.assert(fc.property(
    fc.array(fc.record({ s: text, n: fc.integer({ min: -2, max: 2 }) }), { maxLength: 80 }),
    fc.constantFrom('s', 'n'),
    fc.constantFrom<RangeOrder>('asc', 'desc'),
    fc.integer({ min: 1, max: 8 }),
    fc.option(text, { nil: undefined }),
    fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    (items, field, order, limit, string, integer) => {
      const key = keys[field]!
      const value = field === 's' ? string : integer
      const first: Range = { field, order, limit, offset: 0 }
      if (value !== undefined) first.value = value
      const { seen } = follow(items, indexField(items.map(key)), grammar, first)
      assert.deepStrictEqual(seen, sortedFrom(items, key, field, order, value))
    }
  ), { numRuns: propertyRuns(500), seed: SEED })
  t.pass('fast-check found no counter-example')
})

t.test('property 3: Content-Range and Next-Range values round-trip through the parser', async (t) => {
  const grammar = new Map<string, RangeFieldGrammar>([['s', { type: 'string', defaults: DEFAULTS }], ['n', { type: 'integer', defaults: DEFAULTS }]])
  const printableAscii = /^[\x20-\x7e]*$/
  fc.assert(fc.property(
    fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: fc.constantFrom('a', '.', ';', ' ', '%', '#', ','), maxLength: 4 })), { minLength: 1, maxLength: 20 }),
    fc.array(fc.maxSafeInteger(), { minLength: 1, maxLength: 20 }),
    fc.constantFrom('s', 'n'),
    fc.constantFrom<RangeOrder>('asc', 'desc'),
    fc.integer({ min: 1, max: 20 }),
    fc.nat(20),
    (strings, numbers, field, order, limit, offset) => {
      const keys: RangeValue[] = field === 's' ? strings : numbers
      const page = selectRange(keys, indexField(keys), { field, order, limit, offset })
      if (page.first === undefined || page.last === undefined) return
      const contentRange = contentRangeHeader(field, page.first, page.last)
      assert.match(contentRange, printableAscii)
      // `.` is kept as is: a first value holding `..` or ending in `.` cannot be split off (see below).
      if (typeof page.first === 'number' || !(page.first.includes('..') || page.first.endsWith('.'))) {
        assert.deepStrictEqual(parseContentRange(contentRange, grammar), { field, first: page.first, last: page.last })
      }
      if (page.next !== undefined) {
        const nextRange = nextRangeHeader(page.next)
        assert.match(nextRange, printableAscii)
        assert.deepStrictEqual(parseRange(nextRange, grammar), page.next)
      }
    }
  ), { numRuns: propertyRuns(500), seed: SEED })
  t.pass('fast-check found no counter-example')
  // The one case that cannot be read back.
  t.same(parseContentRange(contentRangeHeader('s', 'a..b', 'c'), grammar), { field: 's', first: 'a', last: 'b..c' })
})
