import type { FailureCount, FailureStore, KeyPolicy } from '../auth-failures.js'

/** The most entries (keys) the memory store holds by default: see memoryFailureStore. */
export const MEMORY_FAILURE_ENTRIES = 100_000

/** A key's count in the memory store, linked into the order of every entry and into the order of its kind (the counts of its tier, or the locks). */
class Entry implements FailureCount {
  older: Entry | undefined = undefined
  newer: Entry | undefined = undefined
  olderOfKind: Entry | undefined = undefined
  newerOfKind: Entry | undefined = undefined
  /** The order of its kind it is linked into. */
  kind!: Order
  failures = 1
  constructor (readonly key: string, readonly resetAt: number, readonly tier: number) {}
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
  constructor (private readonly back: 'older' | 'olderOfKind', private readonly ahead: 'newer' | 'newerOfKind') {}

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

export interface MemoryStoreOptions extends Partial<KeyPolicy> {
  /** The most entries held (MEMORY_FAILURE_ENTRIES): the bound on the store's memory. */
  maxEntries?: number
}

/**
 * The store of one process, without a database, holding at most `maxEntries` keys, of which
 * locks (counts at their limit: `isLock`, by default every count) take at most half. A lock is
 * never evicted before its window ends: were it, a flood of failures from other addresses would
 * give a guesser its budget back. The other half is kept for the counts under their limit, so
 * that a key the table does not hold can always be counted:
 *
 * - To make room for a new key, a count is evicted: of the lowest `tier` held (keyPolicy: an
 *   identity's, then an address's, then a network's), the one whose window opened first. A count
 *   is forgotten only once every count of a lower tier and every older one of its own have been,
 *   each evicted by a failure that was counted. The counts that bound the most guesses go last: a
 *   flood that fills the table makes a guesser's limit per identity its address's ceiling, not
 *   more; the ceiling of a network holds until the table holds nothing but networks and locks.
 * - Once locks fill their half, a failure that would make one more cannot be counted until a lock's
 *   window ends (`fullUntil`), and the limiter refuses such an attempt before its credentials are
 *   looked at: a failure the table could not count would be a free guess. Every other attempt is
 *   counted as usual. An attacker that locks keys from very many networks is refused its next
 *   locks; the clients without a count, or under their limits, are not refused for want of room.
 *
 * Every entry is kept in the order windows opened, which, all windows being as long, is the order
 * they end: each call drops the ended ones from the front, so no timer runs and no sweep walks live
 * entries (an entry met after its end, behind a longer window, is dropped then).
 */
export function memoryFailureStore ({ maxEntries = MEMORY_FAILURE_ENTRIES, isLock = () => true, tier = () => 0 }: MemoryStoreOptions = {}):
FailureStore & { readonly size: number, readonly locks: number } {
  const entries = new Map<string, Entry>()
  /** The most locks held: the rest of the table is the counts'. */
  const lockRoom = Math.floor(maxEntries / 2)
  const windows = new Order('older', 'newer')
  const locks = new Order('olderOfKind', 'newerOfKind')
  /** The counts under their limit, by tier. */
  const counts: Array<Order | undefined> = []
  const place = (entry: Entry, kind: Order) => {
    kind.append(entry)
    entry.kind = kind
  }
  const forget = (entry: Entry) => {
    entries.delete(entry.key)
    windows.remove(entry)
    entry.kind.remove(entry)
  }
  const forgetEnded = (now: number) => {
    while (windows.first !== undefined && windows.first.resetAt <= now) forget(windows.first)
  }
  /** The entry of `key` if its window is still open at `now`. */
  const live = (key: string, now: number) => {
    const entry = entries.get(key)
    if (entry === undefined || entry.resetAt > now) return entry
    forget(entry)
    return undefined
  }
  /** Evicts the count of the lowest tier whose window opened first, if there is one that is not one of `keys`. */
  const evictBut = (keys: readonly string[]) => {
    for (const kind of counts) {
      for (let entry = kind?.first; entry !== undefined; entry = entry.newerOfKind) {
        if (keys.includes(entry.key)) continue
        forget(entry)
        return
      }
    }
  }
  return {
    async read (keys, now) {
      forgetEnded(now)
      const found = new Map<string, FailureCount>()
      for (const key of keys) {
        const entry = live(key, now)
        if (entry !== undefined) found.set(key, { failures: entry.failures, resetAt: entry.resetAt })
      }
      return found
    },
    async record (keys, now, windowMs) {
      forgetEnded(now)
      for (const key of keys) {
        const entry = live(key, now)
        if (entry !== undefined) {
          entry.failures++
          if (entry.kind !== locks && isLock(key, entry.failures)) {
            entry.kind.remove(entry)
            place(entry, locks)
          }
          continue
        }
        // Without room (a caller that did not ask fullUntil), the failure is counted all the same.
        if (entries.size >= maxEntries) evictBut(keys)
        // A new window goes to the back, where the windows that end last are.
        const opened = new Entry(key, now + windowMs, tier(key))
        entries.set(key, opened)
        windows.append(opened)
        place(opened, isLock(key, 1) ? locks : (counts[opened.tier] ??= new Order('olderOfKind', 'newerOfKind')))
      }
    },
    fullUntil (keys, now) {
      forgetEnded(now)
      let added = 0
      let own = 0
      let locking = 0
      for (const key of keys) {
        const entry = live(key, now)
        if (entry === undefined) added++
        else if (entry.kind !== locks) own++
        if (entry?.kind !== locks && isLock(key, (entry?.failures ?? 0) + 1)) locking++
      }
      // Until the lock made first ends (within a window from now); with none to end, more locks
      // at once than the table has room for.
      if (locking > 0 && locks.size + locking > lockRoom) return locks.first?.resetAt ?? now
      // Evictions take counts, and not the counts of these keys: with locks at most half the
      // table, only a table of a few keys can lack them.
      if (entries.size + added - maxEntries > entries.size - locks.size - own) return windows.first?.resetAt ?? now
      return undefined
    },
    get size () { return entries.size },
    get locks () { return locks.size }
  }
}
