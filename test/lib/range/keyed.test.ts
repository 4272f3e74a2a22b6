import assert from 'node:assert/strict'
import t from 'tap'
import fc from 'fast-check'
import type { Range } from '../../../lib/range/grammar.js'
import { ID_RANGE_DEFAULTS, keyedPage, keyedSlice, nextKeyedRange, parseIdRange } from '../../../lib/range/keyed.js'
import { indexField, selectRange } from '../../../lib/range/select.js'
import { SEED, propertyRuns } from '../../helpers/property-runs.js'

/** The ids of a page a slice designates. */
function idsOf (keys: readonly number[], slice: { start: number, length: number, step: 1 | -1 }): number[] {
  return Array.from({ length: slice.length }, (_, i) => keys[slice.start + slice.step * i] as number)
}

t.test('parseIdRange: the grammar of /colors on the one field id, integers, defaults limit 100, offset 0, order asc', async (t) => {
  t.same(parseIdRange('id'), { field: 'id', ...ID_RANGE_DEFAULTS })
  t.same(parseIdRange('id 5; limit 2; order desc; offset 1'), { field: 'id', value: 5, limit: 2, offset: 1, order: 'desc' })
  t.same(parseIdRange('id -9007199254740991'), { field: 'id', value: -9007199254740991, limit: 100, offset: 0, order: 'asc' })
  t.throws(() => parseIdRange('name'), { statusCode: 400, message: /^Invalid Range: unknown field "name"; the fields are id/ })
  t.throws(() => parseIdRange('id x'), { statusCode: 400, message: /^Invalid Range Value: the id value must be a decimal integer/ })
  t.throws(() => parseIdRange('id 1.5'), { statusCode: 400, message: /^Invalid Range Value/ })
  t.throws(() => parseIdRange(''), { statusCode: 400, message: /^Invalid Range: the header is empty/ })
  t.throws(() => parseIdRange('id; limit -1'), { statusCode: 400, message: /^Limit must be non-negative/ })
})

t.test('keyedSlice, keyedPage and nextKeyedRange select what selectRange selects, for unique sorted keys', async (t) => {
  const keys = fc.uniqueArray(fc.integer({ min: -50, max: 200 }), { maxLength: 60 }).map((values) => values.sort((a, b) => a - b))
  const ranges = fc.record({
    value: fc.option(fc.oneof(fc.integer({ min: -60, max: 210 }), fc.constantFrom(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)), { nil: undefined }),
    offset: fc.oneof(fc.integer({ min: 0, max: 70 }), fc.constant(Number.MAX_SAFE_INTEGER)),
    limit: fc.oneof(fc.integer({ min: 0, max: 70 }), fc.constant(Number.MAX_SAFE_INTEGER)),
    order: fc.constantFrom('asc' as const, 'desc' as const)
  })
  fc.assert(fc.property(keys, ranges, (ids, { value, ...options }) => {
    const range: Range = { field: 'id', ...options, ...(value === undefined ? {} : { value }) }
    const expected = selectRange(ids, indexField(ids), range)
    const slice = keyedSlice(ids, range)
    const page = keyedPage(ids, range, slice)
    assert.deepEqual(idsOf(ids, slice), expected.items, 'the ids of the page')
    assert.equal(page.first, expected.first, 'its first id')
    assert.equal(page.last, expected.last, 'its last id')
    assert.deepEqual(nextKeyedRange(range, page), expected.next, 'the next range')
  }), { numRuns: propertyRuns(2000), seed: SEED })
  t.pass('2,000 collections and ranges')
})

t.test('the cases by hand: a value no id has, the value as the whole page, past either end', async (t) => {
  const ids = [2, 4, 6, 8]
  const page = (range: Omit<Range, 'field'>) => {
    const full = { field: 'id', ...range }
    const slice = keyedSlice(ids, full)
    const bounds = keyedPage(ids, full, slice)
    return { ids: idsOf(ids, slice), ...bounds, next: nextKeyedRange(full, bounds) }
  }
  t.same(page({ value: 5, limit: 2, offset: 0, order: 'asc' }), { ids: [6, 8], first: 6, last: 8, full: true, next: { field: 'id', value: 8, limit: 2, offset: 1, order: 'asc' } })
  t.same(page({ value: 5, limit: 2, offset: 0, order: 'desc' }), { ids: [4, 2], first: 4, last: 2, full: true, next: { field: 'id', value: 2, limit: 2, offset: 1, order: 'desc' } })
  t.same(page({ value: 4, limit: 1, offset: 0, order: 'asc' }), { ids: [4], first: 4, last: 4, full: true, next: { field: 'id', value: 4, limit: 1, offset: 1, order: 'asc' } },
    'the page is the value itself: the next one skips it')
  t.same(page({ value: 4, limit: 3, offset: 1, order: 'asc' }), { ids: [6, 8], first: 6, last: 8, full: false, next: undefined }, 'short: no next')
  t.same(page({ value: 9, limit: 3, offset: 0, order: 'asc' }), { ids: [], full: false, next: undefined }, 'past the end')
  t.same(page({ value: 1, limit: 3, offset: 0, order: 'desc' }), { ids: [], full: false, next: undefined }, 'before the start, descending')
  t.same(page({ limit: 0, offset: 0, order: 'asc' }), { ids: [], full: false, next: undefined }, 'limit 0')
  t.same(page({ limit: 2, offset: Number.MAX_SAFE_INTEGER, order: 'desc' }), { ids: [], full: false, next: undefined }, 'an offset past everything')
  t.same(keyedSlice([], { field: 'id', limit: 5, offset: 0, order: 'desc' }), { start: -1, length: 0, step: -1 }, 'nothing to page')
})
