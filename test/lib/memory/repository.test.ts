import t from 'tap'
import { USER_SORT_KEYS, memoryRepository, type SortKey } from '../../../lib/memory/repository.js'
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
    t.same(JSON.parse(JSON.stringify(read)), JSON.parse(JSON.stringify(given)), 'the same data')
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
