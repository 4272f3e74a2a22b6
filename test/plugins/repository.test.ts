import t, { type Test } from 'tap'
import pg from 'pg'
import { memoryRepository, type Repository } from '../../plugins/collections/index.js'
import { isUnavailable, migrate, postgresRepository, redactedUrl, storeUnavailable } from '../../plugins/collections/postgres.js'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { startPostgres } from '../postgres.js'

type Item = Record<string, unknown>

interface Stores {
  /** An empty repository of its own. */
  empty: () => Promise<Repository<Item>>
  /** A repository of its own that starts with the sample users, as the user store does. */
  seeded: () => Promise<Repository<Item>>
}

/**
 * The contract of a Repository (plugins/collections/index.ts), the same for every store: what
 * the collection routes rely on.
 */
function contract (t: Test, stores: Stores) {
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

t.test('the memory store', async (t) => {
  contract(t, {
    empty: async () => memoryRepository<Item>(),
    seeded: async () => memoryRepository<Item>(SAMPLE_USERS)
  })

  t.test('its items are frozen: a caller that tries to change one gets an error', async (t) => {
    const repository = memoryRepository<{ tags: string[], name?: string }>()
    const read = await repository.get(await repository.create({ tags: ['a'] }))
    t.throws(() => { (read as { name?: string }).name = 'x' }, TypeError, 'frozen')
    t.throws(() => { read?.tags.push('c') }, TypeError, 'deeply frozen')
  })
})

t.test('the PostgreSQL store', async (t) => {
  const server = await startPostgres(t)
  const log = { info () {} }
  /** A pool on a database of its own. */
  const pool = (url: string, options: pg.PoolConfig = {}) => {
    const created = new pg.Pool({ connectionString: url, max: 20, ...options })
    // Idle connections end with an error when the server stops at the end of the test.
    created.on('error', () => {})
    t.teardown(() => created.end())
    return created
  }
  /** A new database, migrated. */
  const database = async () => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    await migrate(client, log)
    await client.end()
    return url
  }

  contract(t, {
    empty: async () => postgresRepository<Item>(pool(await database()), 'products'),
    seeded: async () => postgresRepository<Item>(pool(await database()), 'users')
  })

  t.test('migrations: applied once, logged, and a second run does nothing', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    const logged: unknown[] = []
    const logger = { info: (fields: object, msg?: string) => { logged.push({ ...fields, msg }) } }
    await migrate(client, logger)
    t.same(logged, [
      { version: 1, name: 'collections', msg: 'database migration applied' },
      { version: 2, name: 'sample-users', msg: 'database migration applied' }
    ])
    await migrate(client, logger)
    t.equal(logged.length, 2, 'nothing more the second time')
    const { rows } = await client.query('SELECT id, item FROM users ORDER BY id')
    t.same(rows, [{ id: '1', item: SAMPLE_USERS[0] }, { id: '2', item: SAMPLE_USERS[1] }], 'the sample users once, as 1 and 2')
  })

  t.test('migrations: replicas starting together apply each once', async (t) => {
    const url = await server.createDatabase()
    const clients = Array.from({ length: 6 }, () => new pg.Client(url))
    await Promise.all(clients.map((client) => client.connect()))
    t.teardown(() => Promise.all(clients.map((client) => client.end())))
    await Promise.all(clients.map((client) => migrate(client, log)))
    const [client] = clients
    t.same((await client!.query('SELECT version FROM schemaversion ORDER BY version')).rows.map((row) => row.version), ['0', '1', '2'])
    t.same((await client!.query('SELECT item FROM users ORDER BY id')).rows.map((row) => row.item), SAMPLE_USERS, 'two users, not twelve')
  })

  t.test('migrations: a failure leaves nothing half-applied', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    // A table in the way of migration 001: it fails, and 001's other table is not left behind.
    await client.query('CREATE TABLE products (x int)')
    await t.rejects(migrate(client, log), /relation "products" already exists/)
    t.same((await client.query("SELECT to_regclass('users') AS users, to_regclass('schemaversion') AS versions")).rows,
      [{ users: null, versions: null }], 'rolled back')
    await client.query('DROP TABLE products')
    await migrate(client, log)
    t.equal((await client.query('SELECT count(*)::int AS n FROM users')).rows[0].n, 2, 'and it can be run again')
  })

  t.test('a query the database cannot serve becomes 503, a fault of ours stays an error of ours', async (t) => {
    const url = await database()
    const products = pool(url)
    await products.query('ALTER TABLE products RENAME TO gone')
    await t.rejects(postgresRepository<Item>(products, 'products').list(), { code: '42P01' }, 'an undefined table is our bug: not hidden as 503')
    await products.query('ALTER TABLE gone RENAME TO products')

    await products.query('CREATE FUNCTION slow() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$ LANGUAGE plpgsql')
    await products.query('CREATE TRIGGER slow BEFORE INSERT ON products FOR EACH ROW EXECUTE FUNCTION slow()')
    await t.rejects(postgresRepository<Item>(pool(url, { statement_timeout: 50 }), 'products').create({ productId: 1 }),
      { statusCode: 503, code: 'FST_ERR_STORE_UNAVAILABLE', expose: true, headers: { 'retry-after': '5' }, cause: { code: '57014' } },
      'a statement timeout is 503, with its cause')
    t.same(await postgresRepository<Item>(products, 'products').list(), [], 'and nothing was written')
  })
})

t.test('isUnavailable: what the database cannot serve, as opposed to our faults', async (t) => {
  const cases: Array<[unknown, boolean]> = [
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), true],
    [Object.assign(new Error('the database system is starting up'), { code: '57P03' }), true],
    [Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), true],
    [Object.assign(new Error('sorry, too many clients already'), { code: '53300' }), true],
    [Object.assign(new Error('connection failure'), { code: '08006' }), true],
    [Object.assign(new Error('could not write to file'), { code: '58030' }), true],
    [Object.assign(new Error('relation "users" does not exist'), { code: '42P01' }), false],
    [Object.assign(new Error('syntax error'), { code: '42601' }), false],
    [Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' }), false]
  ]
  for (const [err, expected] of cases) t.equal(isUnavailable(err), expected, (err as Error).message)
})

t.test('storeUnavailable and redactedUrl', async (t) => {
  const cause = new Error('down')
  t.match(storeUnavailable(cause), { statusCode: 503, message: 'The database is unavailable: retry later', cause })
  t.equal(redactedUrl('postgres://app:s3cret@db:5432/app'), 'postgres://app:***@db:5432/app', 'the password masked')
  t.equal(redactedUrl('postgresql://db/app'), 'postgresql://db/app', 'nothing to mask')
  t.equal(redactedUrl('postgres://[db'), 'the database of DATABASE_URL', 'a URL that does not parse is not echoed')
})
