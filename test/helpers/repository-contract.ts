import type { Test } from 'tap'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { type Repository } from '../../lib/repository.js'

export type Item = Record<string, unknown>

export interface Stores {
  /** An empty repository of its own. */
  empty: () => Promise<Repository<Item>>
  /** A repository of its own that starts with the sample users, as the user store does. */
  seeded: () => Promise<Repository<Item>>
}

/**
 * The contract of a Repository (plugins/collections/index.ts), the same for every store: what
 * the collection routes rely on.
 */
export function repositoryContract (t: Test, stores: Stores) {
  t.test('ids increasing from 1, never reused; list in id order', async (t) => {
    const repository = await stores.empty()
    t.same(await repository.list(), [])
    t.equal(await repository.create({ n: 1 }), 1)
    t.equal(await repository.create({ n: 2 }), 2)
    t.equal(await repository.create({ n: 3 }), 3)
    t.equal(await repository.delete(3), true)
    t.equal(await repository.delete(3), false, 'twice: nothing to delete')
    t.equal(await repository.create({ n: 4 }), 4, 'the deleted id is not given again')
    t.equal(await repository.replace(1, { n: 10 }), true)
    t.same(await repository.list(), [{ n: 10 }, { n: 2 }, { n: 4 }], 'a replaced item keeps its place')
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
    t.same(await repository.list(), SAMPLE_USERS)
    t.same(await repository.get(1), SAMPLE_USERS[0])
    t.same(await repository.get(2), SAMPLE_USERS[1])
    t.equal(await repository.create(SAMPLE_USERS[0]), 3)
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
    t.same(await repository.list(), items, 'listed as given')
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
    const [listed] = await repository.list() as Array<{ tags: string[] }>
    try { listed!.tags.push('d') } catch {}
    t.same(await repository.get(id), { tags: ['a'] }, 'the objects read')
  })

  t.test('concurrent operations lose nothing acknowledged', async (t) => {
    const repository = await stores.empty()
    const ids = await Promise.all(Array.from({ length: 100 }, (_, n) => repository.create({ n })))
    t.equal(new Set(ids).size, 100, 'distinct ids')
    t.same((await repository.list()).map((item) => item.n).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 100 }, (_, n) => n), 'nothing lost')
    const deleted = await Promise.all([repository.delete(ids[0]!), repository.delete(ids[0]!), repository.delete(ids[0]!)])
    t.same(deleted.filter(Boolean), [true], 'one delete wins')
    const written = await Promise.all([1, 2, 3, 4].map((v) => repository.replace(ids[1]!, { v })))
    t.same(written, [true, true, true, true], 'every replace of an item that exists is applied')
    t.match(await repository.get(ids[1]!), { v: Number }, 'and one of them is the last')
  })
}
