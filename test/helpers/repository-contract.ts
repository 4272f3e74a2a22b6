import type { Test } from 'tap'
import fc from 'fast-check'
import { SAMPLE_USERS, type User } from '../../schemas/user.js'
import { readAll, type ListQuery, type Repository } from '../../lib/repository.js'
import { CollectionFull } from '../../lib/error-codes.js'
import { indexField, selectRange } from '../../lib/range/select.js'
import { SEED, propertyRuns } from './property-runs.js'

export type Item = Record<string, unknown>

export interface Stores {
  /** An empty repository of its own. */
  empty: () => Promise<Repository<Item>>
  /**
   * A repository of its own that starts with the sample users, as the user store does, with its
   * sort keys `age` and `name`; a ceiling of `maxItems` items (none when not given).
   */
  seeded: (maxItems?: number) => Promise<Repository<Item>>
  /**
   * One empty collection under a ceiling of `maxItems` items, as each of `replicas` processes
   * has it: on a database, a repository on a pool of its own each; in memory, the one repository
   * each time (a process's store is its own).
   */
  bounded: (maxItems: number, replicas: number) => Promise<Array<Repository<Item>>>
}

/** Every item a listing of `query` reads. */
export async function list<T> (repository: Repository<T>, query?: ListQuery): Promise<T[]> {
  return readAll(await repository.listing(query))
}

/**
 * Names whose UTF-16 code-unit order differs from code-point order, or that JSON writes with
 * escapes: U+0000 and U+0001 (below everything), U+D7FF, lone surrogates, characters above U+FFFF
 * (two surrogates: below U+E000 in UTF-16), U+E000–U+FFFF, quotes, backslashes, controls.
 */
export const TRICKY_NAMES = [
  '', 'a', 'A', 'Z', 'É', 'é', 'a\u0000', 'a\u0000b', '\u0000', '\u0001', '\u0001x', '\u0002', 'a\u0001', 'tab\tx', 'line\n',
  '\ud7ff', '\ud7fe', '\ud800', '\udbff\udfff', '\udc00', '\udfff', '\ud800a', 'x\ud800', '\ud83c\udf4e', '🍎', '🍎a', '😀',
  '\ue000', '\uefff', '\uf000', '\uffff', '\ufffd', '文字', 'quote " q', 'back \\ slash', '\\', '"', '\\"', 'a"b\\c',
  '\u001f', ' ', '~', '\u007f', '\u0080', '\u07ff', '\u0800'
]

/** UTF-16 code-unit order, as JavaScript's `<` (docs/contract.md, The endpoints). */
const byUnits = (a: string | number, b: string | number) => a < b ? -1 : a > b ? 1 : 0

/**
 * The contract of a Repository (plugins/collections/index.ts), the same for every store: what
 * the collection routes rely on.
 */
export function repositoryContract (t: Test, stores: Stores) {
  t.test('ids increasing from 1, never reused; list in id order', async (t) => {
    const repository = await stores.empty()
    t.same(await list(repository), [])
    t.equal(await repository.create({ n: 1 }), 1)
    t.equal(await repository.create({ n: 2 }), 2)
    t.equal(await repository.create({ n: 3 }), 3)
    t.equal(await repository.delete(3), true)
    t.equal(await repository.delete(3), false, 'twice: nothing to delete')
    t.equal(await repository.create({ n: 4 }), 4, 'the deleted id is not given again')
    t.equal(await repository.replace(1, { n: 10 }), true)
    t.same(await list(repository), [{ n: 10 }, { n: 2 }, { n: 4 }], 'a replaced item keeps its place')
    t.equal(await repository.replace(3, { n: 30 }), false, 'replace does not create')
    t.equal(await repository.get(3), undefined)
    t.same(await repository.get(2), { n: 2 })
    t.equal(await repository.get(Number.MAX_SAFE_INTEGER), undefined, 'the largest id')
    t.equal(await repository.delete(-1), false, 'an id that cannot exist')
    for (const id of [1, 2, 4]) await repository.delete(id)
    t.equal(await repository.create({ n: 5 }), 5, 'an emptied repository goes on counting')
  })

  t.test('a seed takes the first ids', async (t) => {
    const repository = await stores.seeded()
    t.same(await list(repository), SAMPLE_USERS)
    t.same(await repository.get(1), SAMPLE_USERS[0])
    t.same(await repository.get(2), SAMPLE_USERS[1])
    t.equal(await repository.create(SAMPLE_USERS[0]), 3)
  })

  t.test('a ceiling of items: a create past it is refused (CollectionFull, 409) and stores nothing; a delete makes room', async (t) => {
    const [repository] = await stores.bounded(3, 1)
    const ids = [await repository!.create({ n: 1 }), await repository!.create({ n: 2 }), await repository!.create({ n: 3 })]
    const full = await repository!.create({ n: 4 }).then(() => undefined, (err: unknown) => err)
    t.ok(full instanceof CollectionFull, 'refused with CollectionFull')
    t.match(full, { statusCode: 409, code: 'API_ERR_COLLECTION_FULL', message: /holds 3 items/ })
    t.same(await list(repository!), [{ n: 1 }, { n: 2 }, { n: 3 }], 'nothing stored')
    t.equal(await repository!.replace(ids[1]!, { n: 20 }), true, 'a full collection still takes replacements')
    t.equal(await repository!.delete(ids[0]!), true)
    const id = await repository!.create({ n: 5 })
    t.ok(id > ids[2]!, 'a delete makes room, and ids go on increasing')
    await t.rejects(repository!.create({ n: 6 }), CollectionFull, 'full again')
    t.same(await list(repository!), [{ n: 20 }, { n: 3 }, { n: 5 }])

    const seeded = await stores.seeded(3)
    t.equal(await seeded.create({ n: 1 }), 3, 'the seed counts: room for one more')
    await t.rejects(seeded.create({ n: 2 }), CollectionFull, 'and then none')
  })

  t.test('concurrent creates on every replica never pass the ceiling, nor leave room unused', async (t) => {
    const replicas = await stores.bounded(50, 4)
    // Each replica connected first, so that their creates leave together.
    await Promise.all(replicas.map((repository) => list(repository)))
    const results = await Promise.allSettled(replicas.flatMap((repository) => Array.from({ length: 40 }, (_, n) => repository.create({ n }))))
    const created = results.flatMap((result) => result.status === 'fulfilled' ? [result.value] : [])
    const refused = results.flatMap((result) => result.status === 'rejected' ? [result.reason] : [])
    t.equal(created.length, 50, '50 created of 160')
    t.equal(new Set(created).size, 50, 'distinct ids')
    t.ok(refused.length === 110 && refused.every((err) => err instanceof CollectionFull), 'the 110 others refused, as full')
    for (const repository of replicas) t.equal((await list(repository)).length, 50, 'each replica lists 50')
  })

  t.test('items are kept exactly as given', async (t) => {
    const repository = await stores.empty()
    const items: Item[] = [
      { name: 'Isaac Newton', age: 372, email: 'isaac@newton.co.uk', registration_date: '1683-03-01' },
      { productId: -9007199254740991, name: '' },
      { productId: 9007199254740991 },
      { text: 'nul \u0000, lone surrogate \ud800, emoji 🍎, quote " and backslash \\, é' },
      { nested: { list: [1, 'two', null, true, { deep: [] }], empty: {} }, fraction: 1.5e-7 },
      { z: 1, a: 2, 'key with spaces': 3 }
    ]
    const ids = []
    for (const item of items) ids.push(await repository.create(item))
    for (const [index, id] of ids.entries()) {
      t.same(await repository.get(id), items[index], `item ${index}`)
    }
    t.same(await list(repository), items, 'listed as given')
    t.same(Object.keys((await repository.get(ids[5]!))!), ['z', 'a', 'key with spaces'], 'key order kept')
  })

  t.test('the store keeps its own copy: changes to given or read objects do not reach it', async (t) => {
    const repository = await stores.empty()
    const given = { tags: ['a'] }
    const id = await repository.create(given)
    given.tags.push('b')
    t.same(await repository.get(id), { tags: ['a'] }, 'the given object')
    const read = await repository.get(id) as { tags: string[] }
    try { read.tags.push('c') } catch {}
    const [listed] = await list(repository) as Array<{ tags: string[] }>
    try { listed!.tags.push('d') } catch {}
    t.same(await repository.get(id), { tags: ['a'] }, 'the objects read')
  })

  t.test('concurrent operations lose nothing acknowledged', async (t) => {
    const repository = await stores.empty()
    const ids = await Promise.all(Array.from({ length: 100 }, (_, n) => repository.create({ n })))
    t.equal(new Set(ids).size, 100, 'distinct ids')
    t.same((await list(repository)).map((item) => item.n).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 100 }, (_, n) => n), 'nothing lost')
    const deleted = await Promise.all([repository.delete(ids[0]!), repository.delete(ids[0]!), repository.delete(ids[0]!)])
    t.same(deleted.filter(Boolean), [true], 'one delete wins')
    const written = await Promise.all([1, 2, 3, 4].map((v) => repository.replace(ids[1]!, { v })))
    t.same(written, [true, true, true, true], 'every replace of an item that exists is applied')
    t.match(await repository.get(ids[1]!), { v: Number }, 'and one of them is the last')
  })

  t.test('a listing is one snapshot: writes after it is opened change nothing in it', async (t) => {
    const repository = await stores.empty()
    const ids: number[] = []
    // More than a database reads in one statement (lib/postgres/listings.ts, PROBE_ROWS): the cursor's snapshot.
    for (let n = 0; n < 150; n++) ids.push(await repository.create({ n }))
    const queries: ListQuery[] = [
      // A short one first (lib/repository.ts, SHORT_LIST), which the writes below change.
      { page: { start: ids[20]!, offset: 0, limit: 50, order: 'asc' } },
      {},
      { page: { offset: 10, limit: 100, order: 'asc' } },
      { page: { start: ids[140]!, offset: 0, limit: 120, order: 'desc' } }
    ]
    for (const [index, query] of queries.entries()) {
      // (The size from an empty page: reading the whole list would make the next write copy the memory store's arrays.)
      const size = (await repository.listing({ page: { offset: 0, limit: 0, order: 'asc' } })).total
      const expected = await list(repository, query)
      const listing = await repository.listing(query)
      await repository.create({ n: `new ${index}` })
      await repository.delete(ids[20 + index]!)
      await repository.replace(ids[60 + index]!, { n: 'replaced' })
      t.equal(listing.total, size, `${JSON.stringify(query)}: the size in the snapshot`)
      t.same(await readAll(listing), expected, `${JSON.stringify(query)}: the items in the snapshot`)
      t.not(JSON.stringify(await list(repository, query)), JSON.stringify(expected), 'a new listing sees the writes')
    }
    const whole = await repository.listing()
    t.equal(whole.total, (await list(repository)).length, 'a whole list: its total is the number of items it reads')
    await whole.close()
  })

  t.test('a listing closed before or while it is read reads nothing more', async (t) => {
    const repository = await stores.empty()
    for (let n = 0; n < 600; n++) await repository.create({ n })
    const unread = await repository.listing()
    await unread.close()
    await unread.close()
    t.same(await readAll(unread), [], 'closed before reading')
    const partly = await repository.listing()
    const pieces = partly[Symbol.asyncIterator]()
    const first = await pieces.next()
    t.ok(first.done !== true && first.value.length > 0 && first.value.length < 600, 'read in pieces')
    await partly.close()
    t.same(await readAll(partly), [], 'nothing after the close')
    t.equal((await list(repository)).length, 600, 'the repository lists on')
  })

  t.test('pages by id: the items, bounds and next range of selectRange over the ids', async (t) => {
    const repository = await stores.empty()
    const ids: number[] = []
    const items: Item[] = []
    for (let n = 0; n < 160; n++) {
      const id = await repository.create({ n })
      // Gaps: ids of deleted items are values no item has.
      if (n % 7 === 3) await repository.delete(id)
      else {
        ids.push(id)
        items.push({ n })
      }
    }
    const index = indexField(ids)
    const ranges = fc.record({
      value: fc.option(fc.oneof(fc.constantFrom(...ids), fc.integer({ min: -5, max: 170 }), fc.constantFrom(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)), { nil: undefined }),
      offset: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(64, 65, 140, 500, Number.MAX_SAFE_INTEGER)),
      limit: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(64, 65, 66, 100, 137, 1000, Number.MAX_SAFE_INTEGER)),
      order: fc.constantFrom('asc' as const, 'desc' as const)
    })
    await fc.assert(fc.asyncProperty(ranges, async ({ value, offset, limit, order }) => {
      const range = { field: 'id', offset, limit, order, ...(value === undefined ? {} : { value }) }
      const expected = selectRange(items, index, range)
      const listing = await repository.listing({ page: value === undefined ? { offset, limit, order } : { start: value, offset, limit, order } })
      const read = await readAll(listing)
      const label = JSON.stringify(range)
      if (JSON.stringify(read) !== JSON.stringify(expected.items)) throw new Error(`${label}: items ${JSON.stringify(read)}`)
      if (listing.total !== ids.length) throw new Error(`${label}: total ${listing.total}`)
      if (listing.first !== expected.first || listing.last !== expected.last) throw new Error(`${label}: bounds ${listing.first}..${listing.last}`)
      if (listing.full !== (expected.next !== undefined)) throw new Error(`${label}: full ${listing.full}`)
    }), { numRuns: propertyRuns(150), seed: SEED })
    t.pass('150 ranges select what selectRange selects')
  })

  t.test('sorted listings: ascending by the key, ties in id order, names by UTF-16 code unit', async (t) => {
    const repository = await stores.seeded()
    const ages = [0, -1, 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 5, 36]
    // Fields the keys must not be fooled by: others that hold what looks like a key, and \u0000; the
    // fields in either order, as clients send them.
    const user = (name: string, n: number): User => {
      const age = ages[n % ages.length]!
      const email = `"name":"0","age":1,\u0000${n}`
      const date = '"age":-9'
      return n % 2 === 0 ? { name, age, email, registration_date: date } : { registration_date: date, email, age, name } as User
    }
    const all: User[] = [...SAMPLE_USERS]
    const add = async (users: User[]) => {
      for (const item of users) await repository.create(item)
      all.push(...users)
    }
    const check = async (what: string) => {
      for (const key of ['age', 'name'] as const) {
        const expected = all.toSorted((a, b) => byUnits(a[key], b[key]))
        t.same(await list(repository, { sortBy: key }), expected, `${what}: by ${key}`)
        const listing = await repository.listing({ sortBy: key })
        t.equal(listing.total, all.length, `${what}: by ${key}, the total`)
        await listing.close()
      }
    }
    // Names in an order that is not theirs.
    await add(TRICKY_NAMES.map((name, n) => user(name, n)).reverse())
    await check('a few users')
    await add(TRICKY_NAMES.map((name, n) => user(name, n + 3)))
    await check('more than one statement reads')
    await t.rejects(async () => repository.listing({ sortBy: 'email' }), TypeError, 'a key the repository does not have')
  })
}
