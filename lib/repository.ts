import type { Product } from '../schemas/product.js'
import { SAMPLE_USERS, type User } from '../schemas/user.js'

/**
 * Where a collection keeps its items, by id. Ids are positive integers, increasing, never reused;
 * they are not part of the items, which are kept and returned exactly as given.
 * Every operation is atomic for its item: concurrent calls lose no acknowledged write.
 */
export interface Repository<T> {
  /** Every item, in id order. */
  list (): Promise<T[]>
  /** The item with this id, or undefined. */
  get (id: number): Promise<T | undefined>
  /** Stores a new item and returns its id. */
  create (item: T): Promise<number>
  /** Replaces the item with this id; false when there is none. */
  replace (id: number, item: T): Promise<boolean>
  /** Removes the item with this id; false when there is none. */
  delete (id: number): Promise<boolean>
}

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

/**
 * The embedded repository: items in memory, in a Map in id order. Each operation runs to its end
 * without yielding, so it is atomic; ids come from a counter that only grows.
 */
export function memoryRepository<T> (seed: readonly T[] = []): Repository<T> {
  const items = new Map<number, T>()
  let lastId = 0
  for (const item of seed) items.set(++lastId, frozenCopy(item))

  return {
    async list () {
      return [...items.values()]
    },
    async get (id) {
      return items.get(id)
    },
    async create (item) {
      const id = ++lastId
      items.set(id, frozenCopy(item))
      return id
    },
    async replace (id, item) {
      if (!items.has(id)) return false
      items.set(id, frozenCopy(item))
      return true
    },
    async delete (id) {
      return items.delete(id)
    }
  }
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
    users: memoryRepository<User>(SAMPLE_USERS),
    products: memoryRepository<Product>(),
    async check () {}
  }
}
