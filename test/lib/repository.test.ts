import t from 'tap'
import { USER_SORT_KEYS, memoryRepository, type SortKey } from '../../lib/repository.js'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { repositoryContract, type Item } from '../helpers/repository-contract.js'

t.test('the memory store', async (t) => {
  repositoryContract(t, {
    empty: async () => memoryRepository<Item>(),
    seeded: async () => memoryRepository<Item>(SAMPLE_USERS, USER_SORT_KEYS as Record<string, SortKey<Item>>)
  })

  t.test('its items are frozen: a caller that tries to change one gets an error', async (t) => {
    const repository = memoryRepository<{ tags: string[], name?: string }>()
    const read = await repository.get(await repository.create({ tags: ['a'] }))
    t.throws(() => { (read as { name?: string }).name = 'x' }, TypeError, 'frozen')
    t.throws(() => { read?.tags.push('c') }, TypeError, 'deeply frozen')
  })
})
