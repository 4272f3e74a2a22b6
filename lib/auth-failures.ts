import { createHash } from 'node:crypto'

/** The failures counted for a key in its current window. */
export interface FailureCount {
  failures: number
  /** When the window ends (ms since the epoch): the count is forgotten then, not before. */
  resetAt: number
}

/**
 * Where failed authentications are counted: this process's memory, or a database table that
 * every replica shares. Fixed windows: a key's first failure opens a window of `windowMs`, and
 * the count lives until that window ends (a lock is never evicted sooner: that would give a guesser
 * its budget back; see memoryFailureStore for the counts under their limit). Times come from the
 * caller's clock.
 */
export interface FailureStore {
  /** The counts of these keys whose window is still open at `now`; a key without one is absent. */
  read (keys: readonly string[], now: number): Promise<Map<string, FailureCount>>
  /** One more failure for each key; a key whose window has ended (or that has none) opens one. */
  record (keys: readonly string[], now: number, windowMs: number): Promise<void>
  /**
   * For a store with a ceiling: undefined if a failure of these keys can be counted now, else when
   * room is expected (ms since the epoch). Asked in the same turn of the event loop as the failure
   * is recorded, so that no other attempt takes the room in between.
   */
  fullUntil? (keys: readonly string[], now: number): number | undefined
}

/** The most entries (keys) the memory store holds by default: see memoryFailureStore. */
export const MEMORY_FAILURE_ENTRIES = 100_000

/** A key's count in the memory store, linked into the order of every entry and, while under its limit, of the counts. */
class Entry implements FailureCount {
  older: Entry | undefined = undefined
  newer: Entry | undefined = undefined
  olderCount: Entry | undefined = undefined
  newerCount: Entry | undefined = undefined
  /** Under its limit: linked among the counts, which may be evicted. */
  counting = false
  constructor (readonly key: string, public failures: number, readonly resetAt: number) {}
}

/**
 * Entries in the order they were appended: a list linked through the fields `back` and `ahead` of
 * each, so that an entry leaves from anywhere in O(1). (A Map's own order would do, but V8 walks
 * the slots of deleted entries to find its first one: a Map used as a queue costs more and more
 * per call until it is rehashed.)
 */
class Order {
  first: Entry | undefined = undefined
  last: Entry | undefined = undefined
  size = 0
  constructor (private readonly back: 'older' | 'olderCount', private readonly ahead: 'newer' | 'newerCount') {}

  append (entry: Entry): void {
    entry[this.back] = this.last
    if (this.last === undefined) this.first = entry
    else this.last[this.ahead] = entry
    this.last = entry
    this.size++
  }

  remove (entry: Entry): void {
    const before = entry[this.back]
    const after = entry[this.ahead]
    if (before === undefined) this.first = after
    else before[this.ahead] = after
    if (after === undefined) this.last = before
    else after[this.back] = before
    entry[this.back] = undefined
    entry[this.ahead] = undefined
    this.size--
  }
}

export interface MemoryStoreOptions {
  /** The most entries held (MEMORY_FAILURE_ENTRIES): the bound on the store's memory. */
  maxEntries?: number
  /** Whether a key with this many failures is locked (at or over its limit): lockPredicate. By default every count is. */
  isLock?: (key: string, failures: number) => boolean
}

/**
 * The store of one process, without a database, holding at most `maxEntries` keys. A lock (a
 * count at its limit) is never evicted before its window ends: were it, a flood of failures from
 * other addresses would give a guesser its budget back. To make room for a new key, the count
 * under its limit whose window opened first is evicted: a guesser's count is forgotten only after
 * about as many new keys as there are counts, each from a failure that was counted. So that this
 * stays a large number, counts are evicted only while they fill half the table: in a table nearly
 * full of locks, a few addresses taking turns would each be forgotten before their next guess.
 * Past that, the table is full (`fullUntil`) for new keys until a window ends: a failure it could
 * not count would be a free guess, so the limiter refuses such an attempt before its credentials
 * are looked at.
 *
 * Every entry is kept in the order windows opened, which, all windows being as long, is the order
 * they end: each call drops the ended ones from the front, so no timer runs and no sweep walks live
 * entries. The counts are kept in the same order apart, the oldest evicted first.
 */
export function memoryFailureStore ({ maxEntries = MEMORY_FAILURE_ENTRIES, isLock = () => true }: MemoryStoreOptions = {}): FailureStore & { readonly size: number } {
  const entries = new Map<string, Entry>()
  /** The counts that are never evicted to make room: half the table. */
  const keptCounts = Math.floor(maxEntries / 2)
  const windows = new Order('older', 'newer')
  const counts = new Order('olderCount', 'newerCount')
  const forget = (entry: Entry) => {
    entries.delete(entry.key)
    windows.remove(entry)
    if (entry.counting) counts.remove(entry)
  }
  const forgetEnded = (now: number) => {
    while (windows.first !== undefined && windows.first.resetAt <= now) forget(windows.first)
  }
  /** Evicts the oldest count that is not one of `keys`, if there is one. */
  const evictBut = (keys: readonly string[]) => {
    for (let entry = counts.first; entry !== undefined; entry = entry.newerCount) {
      if (keys.includes(entry.key)) continue
      forget(entry)
      return
    }
  }
  return {
    async read (keys, now) {
      forgetEnded(now)
      const found = new Map<string, FailureCount>()
      for (const key of keys) {
        const entry = entries.get(key)
        // A window shorter than the one before it ends behind it: its end is checked here.
        if (entry !== undefined && entry.resetAt > now) found.set(key, { failures: entry.failures, resetAt: entry.resetAt })
      }
      return found
    },
    async record (keys, now, windowMs) {
      forgetEnded(now)
      for (const key of keys) {
        const entry = entries.get(key)
        if (entry !== undefined && entry.resetAt > now) {
          entry.failures++
          if (entry.counting && isLock(key, entry.failures)) {
            counts.remove(entry)
            entry.counting = false
          }
          continue
        }
        if (entry !== undefined) forget(entry)
        // Without room (a caller that did not ask fullUntil), the failure is counted all the same.
        if (entries.size >= maxEntries) evictBut(keys)
        // A new window goes to the back, where the windows that end last are.
        const opened = new Entry(key, 1, now + windowMs)
        entries.set(key, opened)
        windows.append(opened)
        if (!isLock(key, 1)) {
          counts.append(opened)
          opened.counting = true
        }
      }
    },
    fullUntil (keys, now) {
      forgetEnded(now)
      let added = 0
      let own = 0
      for (const key of keys) {
        const entry = entries.get(key)
        if (entry === undefined) added++
        else if (entry.counting) own++
      }
      const evictions = entries.size + added - maxEntries
      // Evictions leave the counts half the table, and do not take the counts of these keys.
      if (evictions <= 0 || evictions <= counts.size - Math.max(keptCounts, own)) return undefined
      // Empty, and still full: more keys than the table holds.
      return windows.first?.resetAt ?? now
    },
    get size () { return entries.size }
  }
}

/** What became of an attempt to authenticate. */
export type Attempt<T> =
  | { outcome: 'accepted', value: T }
  /** The credentials were checked and refused: counted. */
  | { outcome: 'refused' }
  /** Over a limit: refused before the credentials were looked at, and not counted. */
  | { outcome: 'limited', scope: 'user' | 'address', retryAfter: number }
  /** An earlier attempt of the same user from the same address did not finish in `waitMs`. */
  | { outcome: 'busy' }
  /** The store had no room to count a failure of these keys: refused before the credentials were looked at. */
  | { outcome: 'full', retryAfter: number }

export interface LimiterOptions {
  store: FailureStore
  /** Failures per (address, identity) per window; 0: no such limit. */
  limit: number
  /** Failures per address over every identity per window; 0: no such limit. */
  addressLimit: number
  windowMs: number
  /** The clock, in ms since the epoch; by default `Date.now()`, read at each call. */
  now?: () => number
  /** How long an attempt waits for an earlier one of the same key before it gives up ('busy'). */
  waitMs?: number
}

/** The start of the key of an address's count; the key of an identity's count starts otherwise. */
const ADDRESS_KEY = 'address '

/**
 * Which counts of failureLimiter's are locks (at or over their limit), for memoryFailureStore's
 * `isLock`. A key of a limit that is off is never counted.
 */
export function lockPredicate ({ limit, addressLimit }: Pick<LimiterOptions, 'limit' | 'addressLimit'>) {
  return (key: string, failures: number) => failures >= (key.startsWith(ADDRESS_KEY) ? addressLimit : limit)
}

/** A key of fixed length whatever was sent: a 10 kB user name costs what a short one does. */
const hashed = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22)

/** Seconds from `now` until `resetAt`, at least 1: what Retry-After says. */
const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000))

/**
 * Limits failed authentications per (client address, identity) and per client address, where the
 * identity is what the credentials claim to be (a Basic user name, a Bearer token) and the address
 * is lib/client-address.ts's group. Over the first limit, that identity is refused from that
 * address before its credentials are looked at, the right ones included: were the right password
 * let through, the guess that found it would be answered like a success, and guessing would not be
 * slowed at all. Other identities from the address are not affected, so one guesser behind a NAT
 * does not lock out the other users behind it. Over the second limit (far above one user's
 * mistakes), the address is refused whatever it claims: the ceiling for a guesser that tries many
 * user names, and the bound on the keys one address adds to the store.
 *
 * Counts are read before the check and written after it, so concurrent attempts could all be
 * checked against the same count. To hold the limits anyway, the attempts of one identity from one
 * address are checked one at a time (in this process), and an attempt still being checked counts
 * against the address's ceiling as if it would fail. Replicas on one store do not see each other's
 * attempts in flight: in one burst, the limit per identity may be passed by one attempt per other
 * replica, the ceiling by what the other replicas admit at once; never more than one window's
 * worth per replica.
 *
 * An attempt that is within the limits but whose failure the store has no room to count ('full')
 * is refused before its credentials are looked at, the right ones included, as while a database
 * cannot give the counts: a failure that cannot be counted would be a guess for free. The limits
 * come first, so a client the store holds is still answered by its counts.
 */
export function failureLimiter ({ store, limit, addressLimit, windowMs, now = () => Date.now(), waitMs = Infinity }: LimiterOptions) {
  const enabled = limit > 0 || addressLimit > 0
  /** The end of the queue of each key that has attempts being checked. */
  const queues = new Map<string, Promise<void>>()
  /** How many attempts of each address are being checked. */
  const inFlight = new Map<string, number>()

  /** Resolves once the attempts of `key` queued before this one have ended (true), or after `waitMs` (false). */
  function enqueue (key: string): { turn: Promise<boolean>, done: () => void } {
    const previous = queues.get(key) ?? Promise.resolve()
    let done!: () => void
    const mine = new Promise<void>((resolve) => { done = resolve })
    const tail = previous.then(() => mine)
    queues.set(key, tail)
    // Forgotten once every attempt queued so far has ended, one that gave up waiting included.
    tail.then(() => { if (queues.get(key) === tail) queues.delete(key) })
    if (waitMs === Infinity) return { turn: previous.then(() => true), done }
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, waitMs, false) })
    const turn = Promise.race([previous.then(() => true), timedOut]).finally(() => clearTimeout(timer))
    return { turn, done }
  }

  return {
    /** Whether any limit is on (else `attempt` only runs the check). */
    enabled,

    /**
     * Runs `check` (null: the credentials are refused) for credentials that claim `identity`, sent
     * from `address`, within the limits; counts a refusal. The store's errors are thrown.
     */
    async attempt<T> (address: string, identity: string, check: () => T | null): Promise<Attempt<T>> {
      if (!enabled) {
        const value = check()
        return value === null ? { outcome: 'refused' } : { outcome: 'accepted', value }
      }
      const addressKey = `${ADDRESS_KEY}${address}`
      const identityKey = `identity ${address} ${hashed(identity)}`
      const keys = [...(limit > 0 ? [identityKey] : []), ...(addressLimit > 0 ? [addressKey] : [])]

      const { turn, done } = enqueue(identityKey)
      try {
        if (!await turn) return { outcome: 'busy' }
        const othersInFlight = inFlight.get(address) ?? 0
        inFlight.set(address, othersInFlight + 1)
        try {
          const counts = await store.read(keys, now())
          const time = now()
          const forIdentity = counts.get(identityKey)
          if (limit > 0 && forIdentity !== undefined && forIdentity.failures >= limit) {
            return { outcome: 'limited', scope: 'user', retryAfter: secondsUntil(forIdentity.resetAt, time) }
          }
          const forAddress = counts.get(addressKey)
          if (addressLimit > 0 && (forAddress?.failures ?? 0) + othersInFlight >= addressLimit) {
            // Over the ceiling only if the attempts in flight fail: they are decided in a moment.
            const retryAfter = forAddress !== undefined && forAddress.failures >= addressLimit ? secondsUntil(forAddress.resetAt, time) : 1
            return { outcome: 'limited', scope: 'address', retryAfter }
          }
          // Nothing runs between this question and the record below: the room cannot be taken meanwhile.
          const fullUntil = store.fullUntil?.(keys, time)
          if (fullUntil !== undefined) return { outcome: 'full', retryAfter: secondsUntil(fullUntil, time) }
          const value = check()
          if (value !== null) return { outcome: 'accepted', value }
          await store.record(keys, now(), windowMs)
          return { outcome: 'refused' }
        } finally {
          const left = (inFlight.get(address) as number) - 1
          if (left === 0) inFlight.delete(address)
          else inFlight.set(address, left)
        }
      } finally {
        done()
      }
    }
  }
}
