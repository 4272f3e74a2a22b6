import type { Product } from '../schemas/product.js'
import { SAMPLE_USERS, type User } from '../schemas/user.js'
import type { RangeOrder } from './range/grammar.js'
import { countBelow, keyedPage, keyedSlice, type KeyedPage } from './range/keyed.js'
import { sortInSlices } from './sort-in-slices.js'

/** A page by id (docs/contract.md, Pagination by Range): from `start` (inclusive), skip `offset`, take `limit`. */
export interface IdPage {
  start?: number
  offset: number
  limit: number
  order: RangeOrder
}

/** Which items a listing reads: every item, in id order or by a sort key of the repository; or a page by id. */
export interface ListQuery {
  /** One of the repository's sort keys (ascending, ties in id order); absent: id order. Not with `page`. */
  sortBy?: string
  page?: IdPage
}

/**
 * An item of a listing as the store keeps it: the JSON text the API answers for it, written by its
 * schema's serializer, which a list sends as it is (lib/postgres/repository.ts).
 */
export class StoredJson {
  constructor (readonly text: string) {}
}

/** An item of a listing: the item, or its stored JSON. */
export type Listed<T> = T | StoredJson

/** The item itself. */
export function itemOf<T> (entry: Listed<T>): T {
  return entry instanceof StoredJson ? JSON.parse(entry.text) as T : entry
}

/**
 * The items of a list request, read from one snapshot of the collection (concurrent writes change
 * nothing in it), in pieces: a consumer holds one piece at a time, however large the collection.
 * What is known before the first item is read: the collection's size and, for a page, where it lies.
 */
export interface Listing<T> extends KeyedPage, AsyncIterable<ReadonlyArray<Listed<T>>> {
  /** How many items the collection holds in this snapshot: a whole list has them all. */
  readonly total: number
  /**
   * Every item of a short listing (SHORT_LIST at most), which it holds already: written at once,
   * without iterating. Such a listing holds nothing to release.
   */
  readonly items?: ReadonlyArray<Listed<T>>
  /** Stops reading and releases what the listing holds (a database connection); the iteration ends. Idempotent. */
  close (): Promise<void>
}

/**
 * Where a collection keeps its items, by id. Ids are positive integers, increasing, never reused;
 * they are not part of the items, which are kept and returned exactly as given.
 * Every operation is atomic for its item: concurrent calls lose no acknowledged write.
 */
export interface Repository<T> {
  /**
   * The items of a list request, from one snapshot; a sortBy the repository does not have is a
   * TypeError (rejected). The listing itself where the store has it at hand (the memory store's
   * id-order listings: lib/collection-list.ts then answers a short list without a promise), else
   * a promise of it; `await` takes both.
   */
  listing (query?: ListQuery): Listing<T> | Promise<Listing<T>>
  /** The item with this id, or undefined. */
  get (id: number): Promise<T | undefined>
  /**
   * The item with this id as the store keeps it, or undefined: its stored JSON (StoredJson) when
   * that is the text the API answers for it, which is then sent as it is; else the item.
   */
  entry (id: number): Promise<Listed<T> | undefined>
  /** Stores a new item and returns its id. */
  create (item: T): Promise<number>
  /** Replaces the item with this id; false when there is none. */
  replace (id: number, item: T): Promise<boolean>
  /** Removes the item with this id; false when there is none. */
  delete (id: number): Promise<boolean>
}

/** Every item of a listing, in its order, the listing closed: for small collections and tests. */
export async function readAll<T> (listing: Listing<T>): Promise<T[]> {
  const all: T[] = []
  try {
    for await (const piece of listing) for (const entry of piece) all.push(itemOf(entry))
  } finally {
    await listing.close()
  }
  return all
}

/** A sort key of the memory store: an item's value, strings compared by UTF-16 code unit. */
export type SortKey<T> = (item: T) => string | number

/** A copy that nobody can change: stored items are safe from the callers that gave or read them. */
function frozenCopy<T> (value: T): T {
  const copy = structuredClone(value)
  const freeze = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return
    Object.freeze(node)
    for (const child of Object.values(node)) freeze(child)
  }
  freeze(copy)
  return copy
}

/** Items in a piece of a memory listing: a piece is about 10-100 KB of JSON for small items. */
export const MEMORY_PIECE = 256

/** A listing of at most this many items is short: its items are read at once (Listing.items). */
export const SHORT_LIST = 64

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
 * by binary search). Each operation runs to its end without yielding, so it is atomic; ids come
 * from a counter that only grows.
 *
 * A listing is a snapshot in O(1): it keeps the arrays as they are, and the next write copies them
 * first (copy on write), so that what a listing reads never changes under it. A sorted listing
 * sorts the snapshot once, a slice at a time (lib/sort-in-slices.ts), and every listing by that
 * key shares the sorted copy until the next write.
 */
export function memoryRepository<T> (seed: readonly T[] = [], sortKeys: Readonly<Record<string, SortKey<T>>> = {}): Repository<T> {
  let ids: number[] = []
  let items: T[] = []
  /** A listing holds the arrays: the next write copies them. */
  let shared = false
  let lastId = 0
  for (const item of seed) {
    ids.push(++lastId)
    items.push(frozenCopy(item))
  }
  let sorted = new Map<string, Promise<T[]>>()

  /** The arrays, ready to change: copied first when a listing holds them; the sorted copies are stale. */
  function writing (): void {
    if (shared) {
      ids = ids.slice()
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
    async get (id) {
      const at = position(id)
      return at === -1 ? undefined : items[at]
    },
    async entry (id) {
      const at = position(id)
      return at === -1 ? undefined : items[at]
    },
    async create (item) {
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

/** Where the collections keep their items: memory, or PostgreSQL when DATABASE_URL is set. */
export interface Store {
  /** The user store: /users, /user, /users/list-all and /list-all/users. Starts with the sample users as ids 1 and 2. */
  users: Repository<User>
  /** The product store of /products; starts empty. */
  products: Repository<Product>
  /** Resolves when the store answers, rejects when it does not: readiness. */
  check (): Promise<void>
}

/** The embedded store: this process's memory, as fresh as the process. */
export function memoryStore (): Store {
  return {
    users: memoryRepository<User>(SAMPLE_USERS, USER_SORT_KEYS),
    products: memoryRepository<Product>(),
    async check () {}
  }
}
