import { setImmediate as yieldToLoop } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { failureLimiter, lockPredicate, type Attempt, type FailureStore } from '../../lib/auth-failures.js'
import { memoryFailureStore, MEMORY_FAILURE_ENTRIES } from '../../lib/memory/auth-failures.js'
import { SWEEP_BATCH, postgresFailureStore } from '../../lib/postgres/auth-failures.js'
import { migratedDatabase, testPool } from '../helpers/postgres.js'

const MINUTE = 60_000
const T0 = Date.UTC(2026, 0, 1)

/** The promises every store makes, on a fresh store from `make`. */
function storeContract (t: Test, make: () => Promise<FailureStore>) {
  t.test('a key without failures reads as absent', async (t) => {
    const store = await make()
    t.same(await store.read(['a', 'b'], T0), new Map())
  })

  t.test('failures add up within the window, which the first one opened', async (t) => {
    const store = await make()
    await store.record(['a'], T0, MINUTE)
    t.same(await store.read(['a'], T0), new Map([['a', { failures: 1, resetAt: T0 + MINUTE }]]))
    await store.record(['a', 'b'], T0 + 10_000, MINUTE)
    t.same(await store.read(['a', 'b', 'c'], T0 + 20_000), new Map([
      ['a', { failures: 2, resetAt: T0 + MINUTE }],
      ['b', { failures: 1, resetAt: T0 + 10_000 + MINUTE }]
    ]), 'each key its own count and window; an unknown key absent')
  })

  t.test('a window ends at resetAt: the count is gone, and the next failure opens a new window', async (t) => {
    const store = await make()
    await store.record(['a'], T0, MINUTE)
    await store.record(['a'], T0 + 1, MINUTE)
    t.equal((await store.read(['a'], T0 + MINUTE - 1)).get('a')?.failures, 2, 'a millisecond before')
    t.same(await store.read(['a'], T0 + MINUTE), new Map(), 'at the end')
    await store.record(['a'], T0 + MINUTE, MINUTE)
    t.same(await store.read(['a'], T0 + MINUTE), new Map([['a', { failures: 1, resetAt: T0 + 2 * MINUTE }]]))
  })

  t.test('concurrent failures are all counted, whatever the order of their keys', async (t) => {
    const store = await make()
    const keys = Array.from({ length: 20 }, (_, i) => `key-${i}`)
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.record(i % 2 === 0 ? keys : keys.toReversed(), T0, MINUTE)))
    const counts = await store.read(keys, T0)
    t.same([...counts.values()], keys.map(() => ({ failures: 200, resetAt: T0 + MINUTE })))
  })

  t.test('flooding other keys erases nothing before its window ends', async (t) => {
    const store = await make()
    await store.record(['locked'], T0, MINUTE)
    const flood = Array.from({ length: 20_000 }, (_, i) => `flood-${i}`)
    for (let i = 0; i < flood.length; i += 5000) await store.record(flood.slice(i, i + 5000), T0 + 1000, MINUTE)
    t.same(await store.read(['locked', 'flood-0'], T0 + MINUTE - 1), new Map([
      ['locked', { failures: 1, resetAt: T0 + MINUTE }],
      ['flood-0', { failures: 1, resetAt: T0 + 1000 + MINUTE }]
    ]))
  })
}

t.test('the memory store', async (t) => {
  storeContract(t, async () => memoryFailureStore())

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
  })

  t.test('a window shorter than the one before it ends on time, behind it', async (t) => {
    const store = memoryFailureStore()
    await store.record(['long'], T0, 10 * MINUTE)
    await store.record(['short'], T0 + 1, MINUTE)
    t.same(await store.read(['short'], T0 + MINUTE + 1), new Map(), 'ended, though still held')
    t.equal(store.size, 2)
    await store.record(['short'], T0 + MINUTE + 1, MINUTE)
    t.same(await store.read(['long', 'short'], T0 + MINUTE + 1), new Map([
      ['long', { failures: 1, resetAt: T0 + 10 * MINUTE }],
      ['short', { failures: 1, resetAt: T0 + 2 * MINUTE + 1 }]
    ]), 'a new window, from 1')
    t.equal(store.size, 2)
    t.equal(memoryFailureStore().fullUntil?.(['a', 'b'], T0), undefined, `room for ${MEMORY_FAILURE_ENTRIES} keys by default`)
  })

  t.test('full: the oldest count under its limit is evicted for a new key; locks never are', async (t) => {
    const store = memoryFailureStore({ maxEntries: 3, isLock: (_key, failures) => failures >= 2 })
    await store.record(['a'], T0, MINUTE)
    await store.record(['b'], T0 + 1, MINUTE)
    await store.record(['c'], T0 + 2, MINUTE)
    await store.record(['b'], T0 + 3, MINUTE)
    t.equal(store.fullUntil?.(['d'], T0 + 4), undefined, 'a count can make room')
    await store.record(['d'], T0 + 4, MINUTE)
    t.same([...(await store.read(['a', 'b', 'c', 'd'], T0 + 4)).keys()], ['b', 'c', 'd'], 'a, the oldest count, evicted; b, locked, kept')
    t.equal(store.fullUntil?.(['e'], T0 + 5), undefined)
    await store.record(['e'], T0 + 5, MINUTE)
    t.same([...(await store.read(['b', 'c', 'd', 'e'], T0 + 5)).keys()], ['b', 'd', 'e'], 'then c, behind the lock')
    await store.record(['d'], T0 + 6, MINUTE)
    await store.record(['e'], T0 + 6, MINUTE)
    t.equal(store.size, 3)
    t.equal(store.fullUntil?.(['f'], T0 + 6), T0 + 1 + MINUTE, 'nothing but locks: full until the first window ends')
    t.equal(store.fullUntil?.(['b', 'd'], T0 + 6), undefined, 'keys it holds need no room')
    t.same(await store.read(['b', 'd', 'e'], T0 + 6), new Map([
      ['b', { failures: 2, resetAt: T0 + 1 + MINUTE }],
      ['d', { failures: 2, resetAt: T0 + 4 + MINUTE }],
      ['e', { failures: 2, resetAt: T0 + 5 + MINUTE }]
    ]), 'every lock kept')
    t.equal(store.fullUntil?.(['f'], T0 + 1 + MINUTE), undefined, 'room once a window has ended')
  })

  t.test('counts are evicted only while they fill half the table: a few addresses taking turns are not forgotten', async (t) => {
    const store = memoryFailureStore({ maxEntries: 6, isLock: (key) => key.startsWith('lock') })
    await store.record(['lock-1', 'lock-2'], T0, MINUTE)
    await store.record(['turn-1', 'turn-2'], T0 + 1, MINUTE)
    await store.record(['turn-3'], T0 + 2, MINUTE)
    t.equal(store.fullUntil?.(['lock-3'], T0 + 3), undefined, 'room')
    await store.record(['lock-3'], T0 + 3, MINUTE)
    t.equal(store.fullUntil?.(['turn-4'], T0 + 4), T0 + MINUTE, 'three locks, three counts: another count would leave them fewer than half')
    t.same([...(await store.read(['turn-1', 'turn-2', 'turn-3'], T0 + 4)).keys()], ['turn-1', 'turn-2', 'turn-3'], 'none evicted')
    await store.read([], T0 + MINUTE)
    t.equal(store.fullUntil?.(['turn-4'], T0 + MINUTE), undefined, 'the first locks ended')
  })

  t.test('full: the counts of the keys being recorded are not evicted for them', async (t) => {
    const store = memoryFailureStore({ maxEntries: 3, isLock: () => false })
    await store.record(['x'], T0, MINUTE)
    await store.record(['a'], T0, MINUTE)
    await store.record(['b'], T0 + 1, MINUTE)
    await store.record(['x'], T0 + 2, MINUTE)
    t.equal(store.fullUntil?.(['a', 'x', 'c'], T0 + 2), undefined, 'b can make room')
    t.equal(store.fullUntil?.(['a', 'b', 'x', 'c'], T0 + 2), T0 + MINUTE, 'nothing else can')
    await store.record(['a', 'x', 'c'], T0 + 2, MINUTE)
    t.same(await store.read(['x', 'a', 'b', 'c'], T0 + 2), new Map([
      ['x', { failures: 3, resetAt: T0 + MINUTE }],
      ['a', { failures: 2, resetAt: T0 + MINUTE }],
      ['c', { failures: 1, resetAt: T0 + 2 + MINUTE }]
    ]), 'b evicted, though x and a were older')
  })

  t.test('a failure recorded without room is counted all the same; more keys than the table holds never fit', async (t) => {
    const store = memoryFailureStore({ maxEntries: 1 })
    t.equal(store.fullUntil?.(['a', 'b'], T0), T0, 'empty, and still full')
    await store.record(['a'], T0, MINUTE)
    t.equal(store.fullUntil?.(['b'], T0), T0 + MINUTE)
    await store.record(['b'], T0, MINUTE)
    t.equal(store.size, 2)
    t.equal((await store.read(['b'], T0)).get('b')?.failures, 1)
  })

  t.test('failures from ever-changing addresses: the table stays within its ceiling', async (t) => {
    const store = memoryFailureStore({ maxEntries: 100, isLock: lockPredicate({ limit: 3, addressLimit: 10 }) })
    const { attempt, clock } = limiterAt({ store })
    let largest = 0
    for (let i = 0; i < 5000; i++) {
      clock.now = T0 + i
      const result = await attempt(`address-${i}`, 'basic:servant')
      if (result.outcome !== 'refused') t.fail(`attempt ${i}: ${result.outcome}`)
      largest = Math.max(largest, store.size)
    }
    t.equal(largest, 100, 'never more than the ceiling, though every window is still open')
  })

  t.test('a lock survives a flood from other addresses that overflows the table', async (t) => {
    const store = memoryFailureStore({ maxEntries: 50, isLock: lockPredicate({ limit: 3, addressLimit: 10 }) })
    const { attempt, checks } = limiterAt({ store })
    for (let i = 0; i < 3; i++) await attempt('guesser', 'basic:servant')
    for (let i = 0; i < 10; i++) await attempt('sprayer', `basic:user-${i}`)
    for (let i = 0; i < 1000; i++) await attempt(`address-${i}`, `basic:user-${i}`)
    t.ok(store.size <= 50, `${store.size} entries`)
    const before = checks()
    t.match(await attempt('guesser', 'basic:servant', true), { outcome: 'limited', scope: 'user' }, 'the lock of an identity')
    t.match(await attempt('sprayer', 'basic:someone', true), { outcome: 'limited', scope: 'address' }, 'the lock of an address')
    t.equal(checks(), before, 'neither checked')
  })

  t.test('full: an attempt whose failure could not be counted is refused unchecked; one it holds is judged as usual', async (t) => {
    const store = memoryFailureStore({ maxEntries: 6, isLock: lockPredicate({ limit: 1, addressLimit: 10 }) })
    const { attempt, checks, clock } = limiterAt({ store, limit: 1 })
    for (const [address, user] of [['a', 'x'], ['b', 'y'], ['c', 'z']]) t.equal((await attempt(address!, `basic:${user}`)).outcome, 'refused')
    t.equal(store.size, 6, 'three locks, and the counts of the three addresses: locks fill half the table')
    t.same(await attempt('e', 'basic:u', true), { outcome: 'full', retryAfter: 60 }, 'a new client, the right password too')
    t.same(await attempt('c', 'basic:w', true), { outcome: 'full', retryAfter: 60 }, 'a held address with a new identity')
    t.equal(checks(), 3, 'neither checked')
    t.equal(store.size, 6, 'nor counted')
    t.match(await attempt('a', 'basic:x', true), { outcome: 'limited', scope: 'user', retryAfter: 60 }, 'a lock it holds is a 429 as before')
    t.match(await attempt('c', 'basic:z'), { outcome: 'limited', scope: 'user' })
    clock.now = T0 + MINUTE - 1500
    t.same(await attempt('e', 'basic:u', true), { outcome: 'full', retryAfter: 2 }, 'Retry-After: until the first window ends')
    clock.now = T0 + MINUTE
    t.same(await attempt('e', 'basic:u', true), { outcome: 'accepted', value: 'basic:u' }, 'then there is room')
  })
})

t.test('the PostgreSQL store', async (t) => {
  /** A pool on `url`, ended with the test. */
  const poolOn = (url: string, options: pg.PoolConfig = {}) => testPool(t, url, options)
  /** A pool on a new database, migrated. */
  const database = async () => poolOn(await migratedDatabase())
  storeContract(t, async () => postgresFailureStore(await database()))

  t.test('two replicas on one database count together', async (t) => {
    const pool = await database()
    const replicas = [postgresFailureStore(pool), postgresFailureStore(poolOn(pool.options.connectionString!))]
    await Promise.all(Array.from({ length: 100 }, (_, i) => replicas[i % 2]!.record(['a'], T0, MINUTE)))
    for (const replica of replicas) t.equal((await replica.read(['a'], T0)).get('a')?.failures, 100)
  })

  t.test('ended rows are deleted as failures are recorded, a batch at a time', async (t) => {
    const pool = await database()
    const store = postgresFailureStore(pool)
    const rows = async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM auth_failures')).rows[0]!.n
    await store.record(Array.from({ length: SWEEP_BATCH + 50 }, (_, i) => `old-${i}`), T0, MINUTE)
    await store.record(['live'], T0 + 1000, MINUTE)
    t.equal(await rows(), SWEEP_BATCH + 51)
    await store.record(['new'], T0 + MINUTE, MINUTE)
    t.equal(await rows(), 52, 'a batch of ended rows gone')
    await store.record(['new'], T0 + MINUTE, MINUTE)
    t.equal(await rows(), 2, 'and the rest: live and new are left')
    t.same(await store.read(['live', 'new'], T0 + MINUTE), new Map([
      ['live', { failures: 1, resetAt: T0 + 1000 + MINUTE }],
      ['new', { failures: 2, resetAt: T0 + 2 * MINUTE }]
    ]))
  })

  t.test('a database that cannot serve: the store\'s 503, not a fault of ours', async (t) => {
    const store = postgresFailureStore(poolOn('postgres://app:secret@127.0.0.1:1/app', { connectionTimeoutMillis: 1000 }))
    await t.rejects(store.read(['a'], T0), { statusCode: 503, code: 'API_ERR_STORE_UNAVAILABLE', headers: { 'retry-after': '5' } })
    await t.rejects(store.record(['a'], T0, MINUTE), { statusCode: 503, code: 'API_ERR_STORE_UNAVAILABLE' })
  })
})

/** A store whose every call first yields to the event loop, as a database's would: concurrent attempts interleave. */
function slowStore (inner: FailureStore = memoryFailureStore()): FailureStore & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    async read (keys, now) {
      calls.push(`read ${keys.length}`)
      await yieldToLoop()
      return inner.read(keys, now)
    },
    async record (keys, now, windowMs) {
      calls.push(`record ${keys.length}`)
      await yieldToLoop()
      return inner.record(keys, now, windowMs)
    }
  }
}

/** A limiter on a clock the test moves, with a check that says whether it ran. */
function limiterAt (options: { limit?: number, addressLimit?: number, store?: FailureStore, waitMs?: number } = {}) {
  const clock = { now: T0 }
  const limiter = failureLimiter({ store: memoryFailureStore(), limit: 3, addressLimit: 10, windowMs: MINUTE, now: () => clock.now, ...options })
  let checks = 0
  const attempt = (address: string, identity: string, right = false) => limiter.attempt(address, identity, () => {
    checks++
    return right ? identity : null
  })
  return { clock, limiter, attempt, checks: () => checks }
}

const outcomes = (attempts: ReadonlyArray<Attempt<unknown>>) => attempts.map((attempt) => attempt.outcome)

t.test('over the limit for an identity, that identity is refused from that address, unchecked', async (t) => {
  const { attempt, checks, clock } = limiterAt()
  for (let i = 0; i < 3; i++) t.same(await attempt('a', 'basic:servant'), { outcome: 'refused' })
  t.equal(checks(), 3)
  t.same(await attempt('a', 'basic:servant', true), { outcome: 'limited', scope: 'user', retryAfter: 60 }, 'the right password too')
  t.equal(checks(), 3, 'not checked: a guess over the limit learns nothing')
  t.same(await attempt('a', 'basic:ada', true), { outcome: 'accepted', value: 'basic:ada' }, 'another user from the same address')
  t.same(await attempt('b', 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' }, 'the same user from another address')

  clock.now = T0 + MINUTE - 1500
  t.match(await attempt('a', 'basic:servant', true), { outcome: 'limited', retryAfter: 2 }, 'Retry-After: the seconds left, rounded up')
  clock.now = T0 + MINUTE
  t.same(await attempt('a', 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' }, 'once the window has ended')
})

t.test('attempts over a limit are not counted: the window is not drawn out', async (t) => {
  const { attempt, clock } = limiterAt()
  for (let i = 0; i < 3; i++) await attempt('a', 'basic:servant')
  for (let i = 0; i < 10; i++) t.equal((await attempt('a', 'basic:servant')).outcome, 'limited')
  t.equal((await attempt('a', 'basic:ada')).outcome, 'refused', 'the refusals over the limit did not reach the address\'s ceiling')
  clock.now = T0 + MINUTE
  t.same(outcomes([await attempt('a', 'basic:servant'), await attempt('a', 'basic:servant'), await attempt('a', 'basic:servant', true)]),
    ['refused', 'refused', 'accepted'], 'a new window, with the whole budget')
})

t.test('over the ceiling for an address, every identity from it is refused, unchecked', async (t) => {
  const { attempt, checks } = limiterAt()
  for (let i = 0; i < 10; i++) t.equal((await attempt('a', `basic:user-${i}`)).outcome, 'refused', `user-${i}`)
  t.same(await attempt('a', 'basic:someone-new', true), { outcome: 'limited', scope: 'address', retryAfter: 60 })
  t.equal(checks(), 10)
  t.equal((await attempt('b', 'basic:someone-new', true)).outcome, 'accepted', 'another address')
})

t.test('limits of 0 are off; with both off, the store is never used', async (t) => {
  const unused: FailureStore = {
    read: () => { throw new Error('read') },
    record: () => { throw new Error('record') }
  }
  const off = limiterAt({ limit: 0, addressLimit: 0, store: unused })
  t.equal(off.limiter.enabled, false)
  for (let i = 0; i < 50; i++) await off.attempt('a', 'basic:servant')
  t.same(await off.attempt('a', 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' })

  const userOnly = slowStore()
  const noCeiling = limiterAt({ addressLimit: 0, store: userOnly })
  for (let i = 0; i < 30; i++) t.equal((await noCeiling.attempt('a', `basic:user-${i}`)).outcome, 'refused')
  t.equal((await noCeiling.attempt('a', 'basic:user-0')).outcome, 'refused', 'still under the user limit')
  t.ok(userOnly.calls.every((call) => call.endsWith(' 1')), 'one key counted: the identity\'s')

  const addressOnly = slowStore()
  const noUserLimit = limiterAt({ limit: 0, store: addressOnly })
  for (let i = 0; i < 10; i++) t.equal((await noUserLimit.attempt('a', 'basic:servant')).outcome, 'refused')
  t.match(await noUserLimit.attempt('a', 'basic:ada'), { outcome: 'limited', scope: 'address' })
  t.ok(addressOnly.calls.every((call) => call.endsWith(' 1')), 'one key counted: the address\'s')
})

t.test('concurrent attempts cannot get past a limit', async (t) => {
  const sameUser = limiterAt({ store: slowStore() })
  const guesses = await Promise.all(Array.from({ length: 30 }, () => sameUser.attempt('a', 'basic:servant')))
  t.equal(sameUser.checks(), 3, 'three checked')
  t.same(outcomes(guesses), [...Array(3).fill('refused'), ...Array(27).fill('limited')])

  const manyUsers = limiterAt({ limit: 3, addressLimit: 10, store: slowStore() })
  const spray = await Promise.all(Array.from({ length: 100 }, (_, i) => manyUsers.attempt('a', `basic:user-${i}`)))
  t.ok(manyUsers.checks() <= 10, `${manyUsers.checks()} checked, at most the ceiling`)
  t.equal(outcomes(spray).filter((outcome) => outcome === 'refused').length, manyUsers.checks())
  t.match(spray.find((attempt) => attempt.outcome === 'limited'), { scope: 'address' })

  const rightOnes = limiterAt({ store: slowStore() })
  const logins = await Promise.all(Array.from({ length: 30 }, () => rightOnes.attempt('a', 'basic:servant', true)))
  t.same(new Set(outcomes(logins)), new Set(['accepted']), 'a client\'s concurrent right logins wait their turn, and all pass')
})

t.test('an attempt waits for the one before it of the same key at most waitMs', async (t) => {
  // The first read hangs until the test releases it, as a query to a database that went silent.
  let release!: () => void
  const hung = new Promise<void>((resolve) => { release = resolve })
  let reads = 0
  const hanging: FailureStore = {
    read: async () => {
      if (reads++ === 0) await hung
      return new Map()
    },
    async record () {}
  }
  const { attempt } = limiterAt({ store: hanging, waitMs: 50 })
  const first = attempt('a', 'basic:servant')
  t.same(await attempt('a', 'basic:servant'), { outcome: 'busy' }, 'the second gives up')
  t.same(await attempt('a', 'basic:ada', true), { outcome: 'accepted', value: 'basic:ada' }, 'another key does not wait')
  release()
  t.same(await first, { outcome: 'refused' }, 'the first ends when its store answers')
  t.same(await attempt('a', 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' }, 'and the key is free again')
})

t.test('a store that fails: the error is thrown, and the key is not left locked', async (t) => {
  let fail = true
  const inner = memoryFailureStore()
  const flaky: FailureStore = {
    read: async (keys, now) => { if (fail) throw new Error('store down'); return inner.read(keys, now) },
    record: (keys, now, windowMs) => inner.record(keys, now, windowMs)
  }
  const { attempt } = limiterAt({ store: flaky })
  await t.rejects(attempt('a', 'basic:servant'), /store down/)
  fail = false
  t.same(await attempt('a', 'basic:servant'), { outcome: 'refused' })
  t.same(await attempt('a', 'basic:ada', true), { outcome: 'accepted', value: 'basic:ada' }, 'nothing left in flight for the address')
})

t.test('identities of any length are keys of one length', async (t) => {
  const store = slowStore()
  const keys: string[] = []
  const spy: FailureStore = {
    read: (k, now) => { keys.push(...k); return store.read(k, now) },
    record: (k, now, windowMs) => store.record(k, now, windowMs)
  }
  const { attempt } = limiterAt({ store: spy })
  await attempt('a', `basic:${'x'.repeat(10_000)}`)
  await attempt('a', 'basic:y')
  const identityKeys = keys.filter((key) => key.startsWith('identity '))
  t.equal(identityKeys.length, 2)
  t.equal(identityKeys[0]!.length, identityKeys[1]!.length)
  t.ok(identityKeys.every((key) => key.length < 40 && !key.includes('xxx') && !key.includes(':y')), 'no identity in the clear')
})
