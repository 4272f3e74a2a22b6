import assert from 'node:assert/strict'
import t from 'tap'
import fc from 'fast-check'
import { sortInSlices } from '../../lib/sort-in-slices.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

interface Entry { key: number, at: number }
const byKey = (a: Entry, b: Entry) => a.key - b.key

t.test('a stable sort: what Array.prototype.toSorted gives, ties in their order', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 5000 }), fc.integer({ min: 1, max: 3000 }), async (keys, budget) => {
    const entries = keys.map((key, at) => ({ key, at }))
    const sorted = await sortInSlices(entries, byKey, budget)
    assert.deepEqual(sorted, entries.toSorted(byKey))
    assert.deepEqual(entries.map((entry) => entry.at), keys.map((_, at) => at), 'the input is left alone')
  }), { numRuns: propertyRuns(60), seed: SEED })
  t.pass('60 arrays and budgets')
  t.same(await sortInSlices([], byKey), [])
  t.same(await sortInSlices(['b', 'a', 'B', 'é', 'A'], (a, b) => a < b ? -1 : a > b ? 1 : 0), ['A', 'B', 'a', 'b', 'é'], 'code units')
})

t.test('other work runs while a long sort does: a turn of the event loop every `budget` items moved', async (t) => {
  const entries = Array.from({ length: 100_000 }, (_, at) => ({ key: (at * 7919) % 1000, at }))
  let turns = 0
  let sorting = true
  const count = () => {
    turns++
    if (sorting) setImmediate(count)
  }
  setImmediate(count)
  const sorted = await sortInSlices(entries, byKey, 10_000)
  sorting = false
  t.same(sorted, entries.toSorted(byKey))
  // 100,000 items moved into runs, then 7 merge passes of 100,000: about 10 turns each.
  t.ok(turns >= 20, `the event loop turned ${turns} times during the sort`)
})
