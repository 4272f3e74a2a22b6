import t from 'tap'
import { keyPolicy } from '../../../lib/auth-failures.js'
import { memoryFailureStore, MEMORY_FAILURE_ENTRIES } from '../../../lib/memory/auth-failures.js'
import { MINUTE, T0, limiterAt } from '../../helpers/auth-failures.js'

// The memory store's table of failed-login counts: its ceiling, the order it evicts counts in, the
// half it keeps for counts, and the limiter on it. The promises every store makes are
// test/lib/auth-failures.test.ts's.

/** Tiers by the key's first letter, as keyPolicy's: i(dentity) 0, a(ddress) 1, n(etwork) 2. */
const tier = (key: string) => ({ i: 0, a: 1, n: 2 })[key[0] as 'i' | 'a' | 'n'] ?? 0
/** The keys of `keys` the store holds at `now`, in their order. */
const held = async (store: ReturnType<typeof memoryFailureStore>, keys: string[], now: number) => [...(await store.read(keys, now)).keys()]

t.test('ended windows leave memory as later calls come', async (t) => {
  const store = memoryFailureStore()
  await store.record(['a', 'b'], T0, MINUTE)
  await store.record(['c'], T0 + 1000, MINUTE)
  t.equal(store.size, 3)
  await store.read([], T0 + MINUTE)
  t.equal(store.size, 1, 'the two that ended are dropped, the one still counting is kept')
  await store.record(['a'], T0 + MINUTE + 1000, MINUTE)
  t.equal(store.size, 1, 'c ended too; a opened a new window')
  t.same(await store.read(['a'], T0 + MINUTE + 1000), new Map([['a', { failures: 1, resetAt: T0 + 2 * MINUTE + 1000 }]]))
  t.equal(memoryFailureStore().fullUntil?.(['a', 'b'], T0), undefined, `room for ${MEMORY_FAILURE_ENTRIES} keys by default`)
})

t.test('a window shorter than the one before it ends on time, behind it, and leaves when it is met', async (t) => {
  const store = memoryFailureStore({ isLock: () => false })
  await store.record(['long'], T0, 10 * MINUTE)
  await store.record(['short', 'short-2'], T0 + 1, MINUTE)
  t.same(await store.read(['short'], T0 + MINUTE + 1), new Map(), 'ended, though behind a longer window')
  t.equal(store.size, 2, 'and dropped once read')
  t.equal(store.fullUntil?.(['short-2'], T0 + MINUTE + 1), undefined)
  t.equal(store.size, 1, 'or once asked about')
  await store.record(['short'], T0 + MINUTE + 1, MINUTE)
  t.same(await store.read(['long', 'short'], T0 + MINUTE + 1), new Map([
    ['long', { failures: 1, resetAt: T0 + 10 * MINUTE }],
    ['short', { failures: 1, resetAt: T0 + 2 * MINUTE + 1 }]
  ]), 'a new window, from 1')
  t.equal(store.size, 2)
})

t.test('a new key evicts the count whose window opened first; a lock never', async (t) => {
  const store = memoryFailureStore({ maxEntries: 4, isLock: (_key, failures) => failures >= 2 })
  await store.record(['a'], T0, MINUTE)
  await store.record(['b'], T0 + 1, MINUTE)
  await store.record(['c'], T0 + 2, MINUTE)
  await store.record(['d'], T0 + 3, MINUTE)
  await store.record(['a'], T0 + 4, MINUTE)
  t.equal(store.locks, 1, 'a, the oldest, locked')
  t.equal(store.fullUntil?.(['e'], T0 + 5), undefined, 'a count can make room')
  await store.record(['e'], T0 + 5, MINUTE)
  t.same(await held(store, ['a', 'b', 'c', 'd', 'e'], T0 + 5), ['a', 'c', 'd', 'e'], 'b evicted, the oldest count; a, locked and older, kept')
  await store.record(['f'], T0 + 6, MINUTE)
  t.same(await held(store, ['a', 'c', 'd', 'e', 'f'], T0 + 6), ['a', 'd', 'e', 'f'], 'then c')
  t.same(await store.read(['a'], T0 + 6), new Map([['a', { failures: 2, resetAt: T0 + MINUTE }]]))
})

t.test('eviction order: the counts of the lowest tier first, the oldest first within a tier', async (t) => {
  const store = memoryFailureStore({ maxEntries: 6, isLock: () => false, tier })
  const first = ['n1', 'a1', 'i1', 'n2', 'a2', 'i2']
  await store.record(first.slice(0, 3), T0, MINUTE)
  await store.record(first.slice(3), T0 + 1, MINUTE)
  const evicted = []
  for (let i = 0; i < 6; i++) {
    const before = await held(store, first, T0 + 2)
    // New networks' counts: of the top tier, and newer than every other.
    await store.record([`n-new-${i}`], T0 + 2, MINUTE)
    const after = await held(store, first, T0 + 2)
    evicted.push(...before.filter((key) => !after.includes(key)))
    t.equal(store.size, 6)
  }
  t.same(evicted, ['i1', 'i2', 'a1', 'a2', 'n1', 'n2'], 'identities, addresses, networks; each oldest first')
  await store.record(['i-new'], T0 + 3, MINUTE)
  t.same(await held(store, ['n-new-0', 'n-new-1', 'i-new'], T0 + 3), ['n-new-1', 'i-new'], 'then the oldest of what is left')
})

t.test('eviction: the counts of the keys being recorded are not evicted for them', async (t) => {
  const store = memoryFailureStore({ maxEntries: 3, isLock: () => false, tier })
  await store.record(['i-x'], T0, MINUTE)
  await store.record(['i-a'], T0, MINUTE)
  await store.record(['i-b'], T0 + 1, MINUTE)
  await store.record(['i-x'], T0 + 2, MINUTE)
  t.equal(store.fullUntil?.(['i-a', 'i-x', 'i-c'], T0 + 2), undefined, 'i-b can make room')
  t.equal(store.fullUntil?.(['i-a', 'i-b', 'i-x', 'i-c'], T0 + 2), T0 + MINUTE, 'nothing else can: full until the first window ends')
  await store.record(['i-a', 'i-x', 'i-c'], T0 + 2, MINUTE)
  t.same(await store.read(['i-x', 'i-a', 'i-b', 'i-c'], T0 + 2), new Map([
    ['i-x', { failures: 3, resetAt: T0 + MINUTE }],
    ['i-a', { failures: 2, resetAt: T0 + MINUTE }],
    ['i-c', { failures: 1, resetAt: T0 + 2 + MINUTE }]
  ]), 'i-b evicted, though i-x and i-a were older')
})

t.test('locks take at most half the table: a failure that would make one more is full until the first lock made ends', async (t) => {
  // Seven entries, room for three locks; an i(dentity) is locked at 2 failures, an a(ddress) at 3.
  const store = memoryFailureStore({ maxEntries: 7, isLock: (key, failures) => failures >= (key.startsWith('a') ? 3 : 2), tier })
  await store.record(['i0'], T0, MINUTE)
  for (const [i, key] of ['i1', 'i1', 'i2', 'i2'].entries()) await store.record([key], T0 + 1 + i, MINUTE)
  await store.record(['i3', 'a1'], T0 + 5, MINUTE)
  t.equal(store.locks, 2)
  t.equal(store.fullUntil?.(['i3'], T0 + 6), undefined, 'a third lock: three is half of seven, rounded down')
  await store.record(['i3'], T0 + 6, MINUTE)
  t.equal(store.locks, 3)
  t.equal(store.fullUntil?.(['i4'], T0 + 7), undefined, 'a new key whose first failure locks nothing')
  t.equal(store.fullUntil?.(['a1'], T0 + 7), undefined, 'a count that stays under its limit')
  await store.record(['a1'], T0 + 7, MINUTE)
  t.equal(store.fullUntil?.(['a1'], T0 + 8), T0 + 1 + MINUTE, 'a1\'s third failure would lock it: full until i1, the first lock made, ends (not i0, a count)')
  t.equal(store.fullUntil?.(['i0'], T0 + 8), T0 + 1 + MINUTE, 'i0\'s second too')
  t.equal(store.fullUntil?.(['i4', 'a1'], T0 + 8), T0 + 1 + MINUTE, 'one key of several is enough')
  t.equal(store.fullUntil?.(['i1'], T0 + 8), undefined, 'a key locked already makes no new lock')
  t.same(await held(store, ['i0', 'i1', 'i2', 'i3', 'a1'], T0 + 8), ['i0', 'i1', 'i2', 'i3', 'a1'], 'nothing evicted')
  t.equal(store.fullUntil?.(['a1'], T0 + 1 + MINUTE), undefined, 'room once i1 has ended')
  t.equal(store.locks, 2)
})

t.test('the half kept for counts: with locks at their half and the table full, a new key is counted, a count evicted', async (t) => {
  const store = memoryFailureStore({ maxEntries: 6, isLock: (key) => key.startsWith('lock'), tier })
  await store.record(['lock-1', 'lock-2', 'lock-3'], T0, MINUTE)
  await store.record(['i-1', 'i-2', 'a-1'], T0 + 1, MINUTE)
  t.equal(store.fullUntil?.(['lock-4'], T0 + 2), T0 + MINUTE, 'no fourth lock')
  for (const key of ['i-3', 'a-2', 'n-1']) {
    t.equal(store.fullUntil?.([key], T0 + 2), undefined, `${key}: room`)
    await store.record([key], T0 + 2, MINUTE)
    t.equal(store.size, 6)
  }
  t.same(await held(store, ['lock-1', 'lock-2', 'lock-3', 'i-1', 'i-2', 'i-3', 'a-1', 'a-2', 'n-1'], T0 + 2),
    ['lock-1', 'lock-2', 'lock-3', 'a-1', 'a-2', 'n-1'], 'the identities\' counts went first, i-3 too once i-1 and i-2 had')
})

t.test('a table too small for the keys of one failure: counted all the same if recorded; a key it holds needs no room', async (t) => {
  const store = memoryFailureStore({ maxEntries: 1 })
  t.equal(store.fullUntil?.(['a', 'b'], T0), T0, 'every count a lock, room for none: full, with nothing to wait for')
  await store.record(['a'], T0, MINUTE)
  t.equal(store.fullUntil?.(['b'], T0), T0 + MINUTE, 'until a ends')
  t.equal(store.fullUntil?.(['a'], T0), undefined, 'a, held')
  await store.record(['b'], T0, MINUTE)
  t.equal(store.size, 2)
  t.equal((await store.read(['b'], T0)).get('b')?.failures, 1)
  const counts = memoryFailureStore({ maxEntries: 2, isLock: () => false })
  await counts.record(['a'], T0, MINUTE)
  t.equal(counts.fullUntil?.(['a', 'b', 'c'], T0), T0 + MINUTE, 'two new keys, one free entry, and a count of its own')
  t.equal(memoryFailureStore({ maxEntries: 2, isLock: () => false }).fullUntil?.(['a', 'b', 'c'], T0), T0, 'three new keys in an empty table of two: nothing to wait for')
})

const policy = keyPolicy({ limit: 3, addressLimit: 10, networkLimit: 30 })

t.test('failures from ever-changing addresses: the table stays within its ceiling', async (t) => {
  const store = memoryFailureStore({ maxEntries: 100, ...policy })
  const { attempt, clock } = limiterAt({ store })
  let largest = 0
  for (let i = 0; i < 5000; i++) {
    clock.now = T0 + i
    const result = await attempt({ address: `address-${i}`, network: `network-${i >> 3}` }, 'basic:servant')
    if (result.outcome !== 'refused') t.fail(`attempt ${i}: ${result.outcome}`)
    largest = Math.max(largest, store.size)
  }
  t.equal(largest, 100, 'never more than the ceiling, though every window is still open')
})

t.test('a lock survives a flood from other addresses that overflows the table', async (t) => {
  const store = memoryFailureStore({ maxEntries: 50, ...policy })
  const { attempt, checks } = limiterAt({ store })
  for (let i = 0; i < 3; i++) await attempt('guesser', 'basic:servant')
  for (let i = 0; i < 10; i++) await attempt('sprayer', `basic:user-${i}`)
  for (let i = 0; i < 30; i++) await attempt({ address: `net-${i}`, network: 'net' }, `basic:user-${i}`)
  for (let i = 0; i < 1000; i++) await attempt(`address-${i}`, `basic:user-${i}`)
  t.ok(store.size <= 50, `${store.size} entries`)
  const before = checks()
  t.match(await attempt('guesser', 'basic:servant', true), { outcome: 'limited', scope: 'user' }, 'the lock of an identity')
  t.match(await attempt('sprayer', 'basic:someone', true), { outcome: 'limited', scope: 'address' }, 'the lock of an address')
  t.match(await attempt({ address: 'net-new', network: 'net' }, 'basic:someone', true), { outcome: 'limited', scope: 'network' }, 'the lock of a network')
  t.equal(checks(), before, 'none checked')
})

t.test('locks from very many networks: their next lock is refused unchecked; a new client, one under its limits, one logged in, get in', async (t) => {
  const store = memoryFailureStore({ maxEntries: 40, ...policy })
  const { attempt, checks, clock } = limiterAt({ store })
  t.equal((await attempt('regular', 'basic:ada', true)).outcome, 'accepted', 'a client that logs in before the flood')
  t.equal((await attempt('typo', 'basic:bob')).outcome, 'refused', 'and one that mistyped once')
  // Each address locks one identity (three failures) from a network of its own: a lock and two counts.
  let outcome
  let i = 0
  for (; i < 100; i++) {
    clock.now = T0 + i
    const client = { address: `flood-${i}`, network: `flood-net-${i}` }
    for (let failure = 0; failure < 3; failure++) outcome = (await attempt(client, 'basic:servant')).outcome
    if (outcome === 'full') break
  }
  t.equal(store.locks, 20, 'locks at their half of the table')
  t.same([i, outcome], [20, 'full'], 'the 21st address\'s lock-making failure is refused')
  const before = checks()
  t.same(await attempt({ address: 'flood-20', network: 'flood-net-20' }, 'basic:servant', true), { outcome: 'full', retryAfter: 60 }, 'unchecked, the right password too')
  t.equal(checks(), before)
  t.same(await attempt({ address: 'new', network: 'new-net' }, 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' }, 'a client the table holds nothing for')
  t.equal((await attempt('regular', 'basic:ada', true)).outcome, 'accepted', 'the client that logged in')
  t.equal((await attempt('typo', 'basic:bob', true)).outcome, 'accepted', 'the client that mistyped')
  t.equal((await attempt('newcomer', 'basic:eve')).outcome, 'refused', 'a new client\'s failure is counted')
  t.equal((await attempt('newcomer', 'basic:eve', true)).outcome, 'accepted')
  t.ok(store.size <= 40, `${store.size} entries`)
})

t.test('a failure whose count cannot be made is refused unchecked; a client it holds is judged as usual', async (t) => {
  // Every identity's first failure is a lock: room for three of them.
  const store = memoryFailureStore({ maxEntries: 6, ...keyPolicy({ limit: 1, addressLimit: 10, networkLimit: 0 }) })
  const { attempt, checks, clock } = limiterAt({ store, limit: 1, networkLimit: 0 })
  for (const [address, user] of [['a', 'x'], ['b', 'y'], ['c', 'z']]) t.equal((await attempt(address!, `basic:${user}`)).outcome, 'refused')
  t.equal(store.locks, 3, 'three locks, and the counts of the three addresses')
  t.same(await attempt('e', 'basic:u', true), { outcome: 'full', retryAfter: 60 }, 'a new client, whose failure would be a lock, the right password too')
  t.same(await attempt('c', 'basic:w', true), { outcome: 'full', retryAfter: 60 }, 'a held address with a new identity')
  t.equal(checks(), 3, 'neither checked')
  t.equal(store.size, 6, 'nor counted')
  t.match(await attempt('a', 'basic:x', true), { outcome: 'limited', scope: 'user', retryAfter: 60 }, 'a lock it holds is a 429 as before')
  clock.now = T0 + MINUTE - 1500
  t.same(await attempt('e', 'basic:u', true), { outcome: 'full', retryAfter: 2 }, 'Retry-After: until the first lock ends')
  clock.now = T0 + MINUTE
  t.same(await attempt('e', 'basic:u', true), { outcome: 'accepted', value: 'basic:u' }, 'then there is room')
})

t.test('the edges of the room for locks: a failure of a lock leaves it where it was; a table of locks and of the keys being recorded is full', async (t) => {
  const store = memoryFailureStore({ maxEntries: 4, isLock: (key) => key.startsWith('lock'), tier })
  await store.record(['lock-1'], T0, MINUTE)
  await store.record(['lock-2'], T0 + 1, MINUTE)
  await store.record(['lock-1'], T0 + 2, MINUTE)
  t.equal(store.fullUntil?.(['lock-3'], T0 + 3), T0 + MINUTE, 'lock-1 is still the first lock made')
  await store.record(['i-x', 'i-y'], T0 + 3, MINUTE)
  t.equal(store.fullUntil?.(['i-x', 'i-y', 'i-z'], T0 + 4), T0 + MINUTE, 'two locks and the counts of two of the keys: no count to evict for the third')
  t.equal(store.fullUntil?.(['i-x', 'i-z'], T0 + 4), undefined, 'i-y can make room')
  t.same(await store.read(['lock-1'], T0 + 4), new Map([['lock-1', { failures: 2, resetAt: T0 + MINUTE }]]))
})

t.test('eviction skips the tiers that have no count', async (t) => {
  const store = memoryFailureStore({ maxEntries: 3, isLock: () => false, tier })
  await store.record(['n-1', 'a-1', 'a-2'], T0, MINUTE)
  await store.record(['n-2'], T0 + 1, MINUTE)
  t.same(await held(store, ['n-1', 'a-1', 'a-2', 'n-2'], T0 + 1), ['n-1', 'a-2', 'n-2'], 'no identity\'s count: an address\'s, the oldest')
})
