import type { Product } from '../schemas/product.js'
import type { User } from '../schemas/user.js'
import type { RangeOrder } from './range/grammar.js'
import type { KeyedPage } from './range/keyed.js'

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

/** A listing of at most this many items is short: its items are read at once (Listing.items). */
export const SHORT_LIST = 64

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
 * Every operation is atomic for its item: concurrent calls lose no acknowledged write. Each store
 * implements it from a file of its own: lib/memory/repository.ts, lib/postgres/repository.ts.
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
   * that is the text the API answers for it, which is then sent as it is; else the item. At hand
   * where the store has it (the memory store: GET /:id then answers without a promise), else a
   * promise of it; `await` takes both.
   */
  entry (id: number): Listed<T> | undefined | Promise<Listed<T> | undefined>
  /**
   * Stores a new item and returns its id; rejects with CollectionFull (lib/error-codes.ts) when
   * the collection holds its ceiling of items already (COLLECTION_MAX_ITEMS, the store's
   * `maxItems`; none when 0). The ceiling holds under concurrent creates, on every replica: it
   * is never passed, and an item refused had no room when its create was decided.
   */
  create (item: T): Promise<number>
  /** Replaces the item with this id; false when there is none. */
  replace (id: number, item: T): Promise<boolean>
  /** Removes the item with this id; false when there is none. */
  delete (id: number): Promise<boolean>
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
