import { setImmediate as yieldToLoop } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { failureLimiter, keyPolicy, type Attempt, type FailureStore } from '../../lib/auth-failures.js'
import { memoryFailureStore } from '../../lib/memory/auth-failures.js'
import { SWEEP_BATCH, postgresFailureStore } from '../../lib/postgres/auth-failures.js'
import { MINUTE, T0, limiterAt, slowStore } from '../helpers/auth-failures.js'
import { migratedDatabase, testPool } from '../helpers/postgres.js'

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

t.test('limits of 0 are off; with all three off, the store is never used', async (t) => {
  const unused: FailureStore = {
    read: () => { throw new Error('read') },
    record: () => { throw new Error('record') }
  }
  const off = limiterAt({ limit: 0, addressLimit: 0, networkLimit: 0, store: unused })
  t.equal(off.limiter.enabled, false)
  for (let i = 0; i < 50; i++) t.same(await off.attempt('a', 'basic:servant'), { outcome: 'refused' })
  t.same(await off.attempt('a', 'basic:servant', true), { outcome: 'accepted', value: 'basic:servant' })

  const userOnly = slowStore()
  const noCeiling = limiterAt({ addressLimit: 0, networkLimit: 0, store: userOnly })
  for (let i = 0; i < 30; i++) t.equal((await noCeiling.attempt({ address: 'a', network: 'n' }, `basic:user-${i}`)).outcome, 'refused')
  t.equal((await noCeiling.attempt('a', 'basic:user-0')).outcome, 'refused', 'still under the user limit')
  t.equal((await noCeiling.attempt('a', 'basic:user-0')).outcome, 'refused')
  t.match(await noCeiling.attempt('a', 'basic:user-0', true), { outcome: 'limited', scope: 'user' }, 'the user limit alone holds')
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
  t.ok(identityKeys.every((key) => /^identity a [\w-]{22}$/.test(key)), `22 characters of base64url: ${identityKeys.join(', ')}`)
  t.not(identityKeys[0], identityKeys[1])
})

t.test('by default the clock is the system\'s', async (t) => {
  const limiter = failureLimiter({ store: memoryFailureStore(), limit: 1, addressLimit: 0, networkLimit: 0, windowMs: MINUTE })
  const client = { address: 'a', network: undefined }
  t.same(await limiter.attempt(client, 'basic:servant', () => null), { outcome: 'refused' })
  t.same(await limiter.attempt(client, 'basic:servant', () => true), { outcome: 'limited', scope: 'user', retryAfter: 60 })
})

t.test('attempts leave nothing behind once they have ended: a flood of identities costs no memory after it', async (t) => {
  const { limiter, attempt } = limiterAt({ store: slowStore(), waitMs: 1000 })
  const flood = Array.from({ length: 50 }, (_, i) => attempt({ address: `a-${i % 5}`, network: 'n' }, `basic:user-${i % 7}`))
  t.ok(limiter.held > 0, `${limiter.held} keys held meanwhile`)
  await Promise.all(flood)
  await yieldToLoop()
  t.equal(limiter.held, 0)
})

t.test('over the ceiling for a network, every address of it is refused, unchecked; a client without a network has none', async (t) => {
  const { attempt, checks, clock } = limiterAt()
  for (let i = 0; i < 30; i++) {
    t.equal((await attempt({ address: `a-${i % 15}`, network: 'n' }, `basic:user-${i}`)).outcome, 'refused', `failure ${i}, from the network's address ${i % 15}`)
  }
  t.same(await attempt({ address: 'a-new', network: 'n' }, 'basic:someone', true), { outcome: 'limited', scope: 'network', retryAfter: 60 }, 'a new address of the network')
  t.equal(checks(), 30, 'unchecked')
  t.equal((await attempt({ address: 'a-new', network: 'm' }, 'basic:someone', true)).outcome, 'accepted', 'another network')
  t.equal((await attempt('a-new', 'basic:someone', true)).outcome, 'accepted', 'an address without a network')
  clock.now = T0 + MINUTE - 1500
  t.match(await attempt({ address: 'a-0', network: 'n' }, 'basic:user-99', true), { outcome: 'limited', scope: 'network', retryAfter: 2 })
  clock.now = T0 + MINUTE
  t.equal((await attempt({ address: 'a-0', network: 'n' }, 'basic:user-99', true)).outcome, 'accepted', 'once the window has ended')
})

t.test('the narrower ceiling answers first: an address over its own and its network\'s is told of its own', async (t) => {
  const { attempt, clock } = limiterAt({ addressLimit: 10, networkLimit: 10 })
  for (let i = 0; i < 10; i++) await attempt({ address: 'a', network: 'n' }, `basic:user-${i}`)
  clock.now = T0 + 1000
  t.match(await attempt({ address: 'a', network: 'n' }, 'basic:x'), { outcome: 'limited', scope: 'address', retryAfter: 59 })
  t.match(await attempt({ address: 'b', network: 'n' }, 'basic:x'), { outcome: 'limited', scope: 'network', retryAfter: 59 })
})

t.test('the keys of a failure: the network\'s only with a network and a network limit; keyPolicy locks and ranks each', async (t) => {
  const keysOf = async (options: Parameters<typeof limiterAt>[0], network: string | undefined) => {
    const recorded: string[][] = []
    const store: FailureStore = { read: async () => new Map(), record: async (keys) => { recorded.push([...keys]) } }
    await limiterAt({ ...options, store }).attempt({ address: 'a', network }, 'basic:servant')
    return recorded[0]!
  }
  const [identity, address, network] = await keysOf({}, 'n')
  t.match([identity, address, network], [/^identity a /, 'address a', 'network n'])
  t.same(await keysOf({}, undefined), [identity, address], 'no network')
  t.same(await keysOf({ networkLimit: 0 }, 'n'), [identity, address], 'no network limit')
  t.same(await keysOf({ limit: 0, addressLimit: 0 }, 'n'), [network], 'the network limit alone')

  const { isLock, tier } = keyPolicy({ limit: 3, addressLimit: 10, networkLimit: 30 })
  t.same([identity, address, network].map((key) => [isLock(key!, 2), isLock(key!, 3), isLock(key!, 9), isLock(key!, 10), isLock(key!, 29), isLock(key!, 30)]), [
    [false, true, true, true, true, true],
    [false, false, false, true, true, true],
    [false, false, false, false, false, true]
  ], 'each at its own limit')
  t.same([identity, address, network].map((key) => tier(key!)), [0, 1, 2], 'an identity\'s count evicted first, a network\'s last')
})

t.test('concurrent attempts from many addresses of one network cannot get past its ceiling', async (t) => {
  const { attempt, checks } = limiterAt({ addressLimit: 0, store: slowStore() })
  const spray = await Promise.all(Array.from({ length: 100 }, (_, i) => attempt({ address: `a-${i}`, network: 'n' }, 'basic:servant')))
  t.equal(checks(), 30, 'thirty checked: the ceiling')
  t.same(outcomes(spray), [...Array(30).fill('refused'), ...Array(70).fill('limited')])
  t.same(spray.slice(30), Array(70).fill({ outcome: 'limited', scope: 'network', retryAfter: 1 }), 'over it only if those in flight fail: retry in a second')
  t.same(await attempt({ address: 'a-0', network: 'n' }, 'basic:servant'), { outcome: 'limited', scope: 'network', retryAfter: 60 }, 'then they have')
})

/** A store whose reads each wait until the test lets them through: `release(n)`, the nth read to come (from 0), once it waits. */
function gatedStore () {
  const inner = memoryFailureStore()
  const gates: Array<() => void> = []
  const store: FailureStore = {
    read: async (keys, now) => {
      await new Promise<void>((resolve) => gates.push(resolve))
      return inner.read(keys, now)
    },
    record: (keys, now, windowMs) => inner.record(keys, now, windowMs)
  }
  const release = async (n: number) => {
    while (gates[n] === undefined) await yieldToLoop()
    gates[n]!()
  }
  return { store, release }
}

t.test('an attempt in flight counts against a ceiling until it ends, and no longer', async (t) => {
  const narrow = gatedStore()
  const two = limiterAt({ addressLimit: 2, store: narrow.store })
  const first = two.attempt('a', 'basic:u1')
  const second = two.attempt('a', 'basic:u2')
  await narrow.release(0)
  t.same(await first, { outcome: 'refused' })
  const third = two.attempt('a', 'basic:u3', true)
  await narrow.release(2)
  t.same(await third, { outcome: 'limited', scope: 'address', retryAfter: 1 }, 'one failure and the second attempt in flight: the ceiling of two, if it fails')
  await narrow.release(1)
  t.same(await second, { outcome: 'limited', scope: 'address', retryAfter: 1 }, 'as the second, which the first was in flight for')

  const wide = gatedStore()
  const three = limiterAt({ addressLimit: 3, store: wide.store })
  const both = [three.attempt('b', 'basic:u1'), three.attempt('b', 'basic:u2')]
  await wide.release(0)
  await wide.release(1)
  t.same(await Promise.all(both), [{ outcome: 'refused' }, { outcome: 'refused' }])
  const after = three.attempt('b', 'basic:u3', true)
  await wide.release(2)
  t.same(await after, { outcome: 'accepted', value: 'basic:u3' }, 'two failures, none in flight: under the ceiling of three')
})

t.test('over a ceiling only with the attempts in flight: retry in a second, whatever the count so far', async (t) => {
  const { attempt } = limiterAt({ addressLimit: 0, store: slowStore() })
  for (let i = 0; i < 20; i++) await attempt({ address: `a-${i}`, network: 'n' }, 'basic:servant')
  const spray = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt({ address: `b-${i}`, network: 'n' }, 'basic:servant')))
  t.same(outcomes(spray), [...Array(10).fill('refused'), ...Array(10).fill('limited')])
  t.same(spray.slice(10), Array(10).fill({ outcome: 'limited', scope: 'network', retryAfter: 1 }))
})

t.test('an attempt waits for every one before it of the same key, though the first of them has ended', async (t) => {
  // Reads give the counts of when they were asked, and answer when the test says: as a database's.
  const inner = memoryFailureStore()
  const gates: Array<() => void> = []
  const store: FailureStore = {
    read: async (keys, now) => {
      const counts = await inner.read(keys, now)
      await new Promise<void>((resolve) => gates.push(resolve))
      return counts
    },
    record: (keys, now, windowMs) => inner.record(keys, now, windowMs)
  }
  const release = async (n: number) => {
    while (gates[n] === undefined) await yieldToLoop()
    gates[n]!()
  }
  const { attempt, checks } = limiterAt({ limit: 2, store })
  const first = attempt('a', 'basic:servant')
  const second = attempt('a', 'basic:servant')
  await release(0)
  t.same(await first, { outcome: 'refused' })
  // Whatever the first's end sets off has run: the queue must still hold the second.
  await yieldToLoop()
  const third = attempt('a', 'basic:servant')
  await release(1)
  t.same(await second, { outcome: 'refused' })
  await release(2)
  t.match(await third, { outcome: 'limited', scope: 'user' }, 'it read its count after the second\'s failure')
  t.equal(checks(), 2)
})
