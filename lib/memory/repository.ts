import type { Product } from '../../schemas/product.js'
import { CollectionFull } from '../error-codes.js'
import { SAMPLE_USERS, type User } from '../../schemas/user.js'
import { countBelow, keyedPage, keyedSlice, type KeyedPage } from '../range/keyed.js'
import { SHORT_LIST, type Listing, type Repository, type Store } from '../repository.js'
import { sortInSlices } from '../sort-in-slices.js'

/** A sort key of the memory store: an item's value, strings compared by UTF-16 code unit. */
export type SortKey<T> = (item: T) => string | number

/**
 * A copy that nobody can change: stored items are safe from the callers that gave or read them.
 * Items are JSON data (a validated request body), so the copy walks plain objects and arrays; it
 * is made and frozen in one pass, a fraction of the cost of `structuredClone` and a freezing walk
 * after it (the figure: bench/README.md, "Figures measured so far", the memory store's copy).
 */
function frozenCopy<T> (value: T): T {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const child = frozenCopy((value as Record<string, unknown>)[key])
    // JSON.parse makes "__proto__" an own key; an assignment would set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: child, enumerable: true })
    else copy[key] = child
  }
  return Object.freeze(copy) as T
}

/** Items in a piece of a memory listing: a piece is about 10-100 KB of JSON for small items. */
export const MEMORY_PIECE = 256

/** `length` items of `items` from `start` by `step`, in pieces of MEMORY_PIECE. */
async function * pieces<T> (items: readonly T[], start: number, length: number, step: 1 | -1): AsyncGenerator<readonly T[]> {
  for (let done = 0; done < length; done += MEMORY_PIECE) yield run(items, start + step * done, Math.min(MEMORY_PIECE, length - done), step)
}

/** `length` items of `items` from `start` by `step`. */
function run<T> (items: readonly T[], start: number, length: number, step: 1 | -1): T[] {
  if (step === 1) return items.slice(start, start + length)
  const backwards: T[] = new Array(length)
  for (let i = 0; i < length; i++) backwards[i] = items[start - i] as T
  return backwards
}

/**
 * A listing of `length` items of `items` from `start` by `step`: the arrays of a snapshot, which
 * stay as they are, or for a short listing its own copy of the items. Nothing to release. A class,
 * its methods shared: a listing per request costs one object.
 */
class MemoryListing<T> implements Listing<T> {
  readonly full: boolean
  readonly first: number | undefined
  readonly last: number | undefined
  readonly items: readonly T[] | undefined
  #closed = false

  constructor (private readonly source: readonly T[], readonly total: number, page: KeyedPage, private readonly start: number, private readonly length: number, private readonly step: 1 | -1) {
    this.full = page.full
    this.first = page.first
    this.last = page.last
    this.items = length <= SHORT_LIST ? run(source, start, length, step) : undefined
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<readonly T[]> {
    const all = this.items === undefined ? pieces(this.source, this.start, this.length, this.step) : pieces(this.items, 0, this.length, 1)
    for await (const piece of all) {
      if (this.#closed) return
      yield piece
    }
  }

  async close (): Promise<void> {
    this.#closed = true
  }
}

/**
 * The embedded repository: items in memory, in arrays in id order (ids sorted, so an id is found
 * by binary search). Each operation runs to its end without yielding, so it is atomic (a create's
 * check of the ceiling, `maxItems` items, 0 for none, with it); ids come from a counter that only grows.
 *
 * A listing is a snapshot in O(1): it keeps the items' array as it is, and the next write copies it
 * first (copy on write), so that what a listing reads never changes under it. A sorted listing
 * sorts the snapshot once, a slice at a time (lib/sort-in-slices.ts), and every listing by that
 * key shares the sorted copy until the next write.
 */
export function memoryRepository<T> (seed: readonly T[] = [], sortKeys: Readonly<Record<string, SortKey<T>>> = {}, maxItems = 0): Repository<T> {
  const ids: number[] = []
  let items: T[] = []
  /** A listing holds the items' array: the next write copies it. */
  let shared = false
  let lastId = 0
  for (const item of seed) {
    ids.push(++lastId)
    items.push(frozenCopy(item))
  }
  let sorted = new Map<string, Promise<T[]>>()

  /** The arrays, ready to change: the items copied first when a listing holds them (it reads the ids when it is made); the sorted copies are stale. */
  function writing (): void {
    if (shared) {
      items = items.slice()
      shared = false
    }
    if (sorted.size > 0) sorted = new Map()
  }

  function position (id: number): number {
    const low = countBelow(ids, id)
    return ids[low] === id ? low : -1
  }

  function sortedBy (name: string): Promise<T[]> {
    const key = sortKeys[name]
    if (key === undefined) throw new TypeError(`this repository has no sort key ${JSON.stringify(name)}`)
    let found = sorted.get(name)
    if (found === undefined) {
      // A stable sort of items in id order: ties keep id order.
      found = sortInSlices(items, (a, b) => {
        const ka = key(a)
        const kb = key(b)
        return ka < kb ? -1 : ka > kb ? 1 : 0
      })
      sorted.set(name, found)
    }
    return found
  }

  async function sortedListing (sortBy: string): Promise<Listing<T>> {
    const list = await sortedBy(sortBy)
    return new MemoryListing(list, list.length, { full: false }, 0, list.length, 1)
  }

  return {
    listing ({ sortBy, page } = {}) {
      if (page !== undefined) {
        const range = { field: 'id', value: page.start, ...page }
        const slice = keyedSlice(ids, range)
        // A short listing copies its items; a longer one keeps the arrays, and the next write copies them.
        if (slice.length > SHORT_LIST) shared = true
        return new MemoryListing(items, items.length, keyedPage(ids, range, slice), slice.start, slice.length, slice.step)
      }
      if (sortBy !== undefined) return sortedListing(sortBy)
      if (items.length > SHORT_LIST) shared = true
      return new MemoryListing(items, items.length, { full: false }, 0, items.length, 1)
    },
    // position() is -1 for an id not stored, and items[-1] is undefined.
    async get (id) {
      return items[position(id)]
    },
    entry (id) {
      return items[position(id)]
    },
    async create (item) {
      // The seed counts, as the items a database starts with do.
      if (maxItems > 0 && ids.length >= maxItems) throw new CollectionFull(maxItems)
      writing()
      const id = ++lastId
      ids.push(id)
      items.push(frozenCopy(item))
      return id
    },
    async replace (id, item) {
      const at = position(id)
      if (at === -1) return false
      writing()
      items[at] = frozenCopy(item)
      return true
    },
    async delete (id) {
      const at = position(id)
      if (at === -1) return false
      writing()
      ids.splice(at, 1)
      items.splice(at, 1)
      return true
    }
  }
}

/** GET /users's sort keys (docs/contract.md, The endpoints): by age, by name (UTF-16 code units). */
export const USER_SORT_KEYS: Readonly<Record<string, SortKey<User>>> = {
  age: (user) => user.age,
  name: (user) => user.name
}

/** The embedded store: this process's memory, as fresh as the process; each collection holds at most `maxItems` (0: no ceiling). */
export function memoryStore (maxItems = 0): Store {
  return {
    users: memoryRepository<User>(SAMPLE_USERS, USER_SORT_KEYS, maxItems),
    products: memoryRepository<Product>([], {}, maxItems),
    async check () {}
  }
}
