import type { FailureCount, FailureStore } from '../auth-failures.js'

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
