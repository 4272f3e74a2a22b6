import t from 'tap'
import { MEMORY_PIECE, USER_SORT_KEYS, memoryRepository, memoryStore, type SortKey } from '../../../lib/memory/repository.js'
import { CollectionFull } from '../../../lib/error-codes.js'
import { SHORT_LIST, itemOf, readAll, type Listing } from '../../../lib/repository.js'
import { SAMPLE_USERS } from '../../../schemas/user.js'
import { repositoryContract, type Item } from '../../helpers/repository-contract.js'

t.test('the memory store', async (t) => {
  repositoryContract(t, {
    empty: async () => memoryRepository<Item>(),
    seeded: async (maxItems) => memoryRepository<Item>(SAMPLE_USERS, USER_SORT_KEYS as Record<string, SortKey<Item>>, maxItems),
    bounded: async (maxItems, replicas) => Array(replicas).fill(memoryRepository<Item>([], {}, maxItems))
  })

  t.test('its items are frozen: a caller that tries to change one gets an error', async (t) => {
    const repository = memoryRepository<{ tags: string[], name?: string }>()
    const read = await repository.get(await repository.create({ tags: ['a'] }))
    t.throws(() => { (read as { name?: string }).name = 'x' }, TypeError, 'frozen')
    t.throws(() => { read?.tags.push('c') }, TypeError, 'deeply frozen')
  })

  t.test('its items are copies of JSON data: the caller keeps its own, and "__proto__" stays a key', async (t) => {
    const repository = memoryRepository<Record<string, unknown>>()
    const given = JSON.parse('{"name":"Ada","tags":["a",{"b":null}],"__proto__":{"admin":true}}') as Record<string, unknown>
    const read = await repository.get(await repository.create(given))
    t.equal(JSON.stringify(read), JSON.stringify(given), 'the same data')
    t.ok(Array.isArray(read?.tags), 'arrays stay arrays')
    t.not(read, given, 'not the caller\'s object');
    (given.tags as unknown[]).push('c')
    t.same(read?.tags, ['a', { b: null }], 'nor its arrays')
    t.equal(Object.getPrototypeOf(read), Object.prototype, 'the prototype is not taken from the data')
    t.same(Object.getOwnPropertyDescriptor(read, '__proto__')?.value, { admin: true }, 'an own key')
    t.ok(Object.isFrozen((read?.tags as unknown[])[1]), 'frozen to the leaves')
  })
})

t.test('the memory store lists in id order and reads an item at once, not by a promise; a sorted listing is a promise', async (t) => {
  const repository = memoryRepository<Item>(SAMPLE_USERS, USER_SORT_KEYS as Record<string, SortKey<Item>>)
  const whole = repository.listing()
  t.notOk(whole instanceof Promise, 'the whole list')
  t.equal((whole as { total: number }).total, SAMPLE_USERS.length)
  t.notOk(repository.listing({ page: { offset: 0, limit: 1, order: 'asc' } }) instanceof Promise, 'a page')
  const entry = repository.entry(1)
  t.notOk(entry instanceof Promise, 'an item by id: GET /:id answers without a promise')
  t.same(entry, SAMPLE_USERS[0])
  t.equal(repository.entry(999), undefined, 'and no item')
  const sorted = repository.listing({ sortBy: 'name' })
  t.ok(sorted instanceof Promise, 'sorted: the sort may take turns of the event loop')
  t.equal((await sorted).total, SAMPLE_USERS.length)
})

/** A memory repository of `count` items `{ n }`, n from 1. */
async function numbered (count: number) {
  const repository = memoryRepository<{ n: number }>()
  for (let n = 1; n <= count; n++) await repository.create({ n })
  return repository
}

/** The pieces a listing yields, as the numbers of their items. */
async function piecesOf (listing: Listing<{ n: number }> | Promise<Listing<{ n: number }>>): Promise<number[][]> {
  const pieces: number[][] = []
  for await (const piece of await listing) pieces.push(piece.map((item) => itemOf(item).n))
  return pieces
}

t.test('the memory store reads a listing in pieces of MEMORY_PIECE items, the last one the rest, none empty', async (t) => {
  const repository = await numbered(2 * MEMORY_PIECE + 88)
  const range = (from: number, to: number) => Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => from < to ? from + i : from - i)
  t.same((await piecesOf(repository.listing())).map((piece) => piece.length), [MEMORY_PIECE, MEMORY_PIECE, 88], 'the whole list')
  t.same(await piecesOf(repository.listing({ page: { offset: 0, limit: 300, order: 'asc' } })), [range(1, 256), range(257, 300)], 'a page from the start')
  t.same(await piecesOf(repository.listing({ page: { start: 500, offset: 0, limit: 300, order: 'desc' } })), [range(500, 245), range(244, 201)], 'a page down from an id')
  t.same((await piecesOf(repository.listing({ page: { offset: 0, limit: 2 * MEMORY_PIECE, order: 'asc' } }))).map((piece) => piece.length),
    [MEMORY_PIECE, MEMORY_PIECE], 'a multiple of MEMORY_PIECE: no empty piece after')
  t.same(await piecesOf(memoryRepository<{ n: number }>().listing()), [], 'an empty list: no piece')
})

t.test('a listing of SHORT_LIST items at most holds them already; a longer one reads them from the store', async (t) => {
  const repository = await numbered(SHORT_LIST + 1)
  const short = await repository.listing({ page: { offset: 0, limit: SHORT_LIST, order: 'asc' } })
  t.equal(short.items?.length, SHORT_LIST)
  t.equal((await repository.listing({ page: { offset: 0, limit: SHORT_LIST + 1, order: 'asc' } })).items, undefined, 'a page')
  t.equal((await repository.listing()).items, undefined, 'the whole list')
})

t.test('a long listing of the memory store is a snapshot: a create, replace or delete after it is opened is not in it', async (t) => {
  const count = SHORT_LIST + 10
  for (const query of [undefined, { page: { offset: 0, limit: count, order: 'asc' as const } }]) {
    const repository = await numbered(count)
    const before = await repository.listing(query)
    await repository.replace(1, { n: -1 })
    const afterReplace = await repository.listing(query)
    await repository.delete(2)
    const afterDelete = await repository.listing(query)
    await repository.create({ n: 0 })
    const numbers = async (listing: Listing<{ n: number }>) => (await readAll(listing)).map((item) => item.n)
    const all = Array.from({ length: count }, (_, i) => i + 1)
    t.same(await numbers(before), all, `${query === undefined ? 'the whole list' : 'a page'}: as it was`)
    t.same(await numbers(afterReplace), [-1, ...all.slice(1)], 'after the replace')
    t.same(await numbers(afterDelete), [-1, ...all.slice(2)], 'after the delete')
  }
})

t.test('the memory store: a whole or sorted listing is not full, an item is read by its id, a sort key it lacks is named', async (t) => {
  const repository = memoryRepository<Item>(SAMPLE_USERS, USER_SORT_KEYS as Record<string, SortKey<Item>>)
  t.equal((await repository.listing()).full, false)
  t.equal((await repository.listing({ sortBy: 'age' })).full, false)
  t.same(repository.entry(2), SAMPLE_USERS[1])
  t.same(await repository.get(2), SAMPLE_USERS[1])
  t.equal(await repository.get(0), undefined)
  await t.rejects(async () => repository.listing({ sortBy: 'email' }), { name: 'TypeError', message: 'this repository has no sort key "email"' })
})

t.test('memoryStore: the sample users and no products, each under the ceiling', async (t) => {
  const store = memoryStore(SAMPLE_USERS.length)
  t.same(await readAll(await store.users.listing()), SAMPLE_USERS)
  t.same(await readAll(await store.users.listing({ sortBy: 'age' })), SAMPLE_USERS.toSorted((a, b) => a.age - b.age), 'by age')
  await t.rejects(store.users.create(SAMPLE_USERS[0]!), CollectionFull, 'the seed counts')
  t.equal(await store.products.create({ productId: 1 } as never), 1)
  t.equal(await store.check(), undefined)
  t.equal(await memoryStore().users.create(SAMPLE_USERS[0]!), SAMPLE_USERS.length + 1, 'no ceiling')
})
