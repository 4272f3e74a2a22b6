import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { isUnavailable, migrate, postgresRepository, redactedUrl, storeUnavailable } from '../../lib/postgres.js'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { testPostgres } from '../helpers/postgres.js'
import { repositoryContract, type Item } from '../helpers/repository-contract.js'

t.test('the PostgreSQL repository', async (t) => {
  const server = await testPostgres()
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

  repositoryContract(t, {
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
      { version: 2, name: 'sample-users', msg: 'database migration applied' },
      { version: 3, name: 'auth-failures', msg: 'database migration applied' }
    ])
    await migrate(client, logger)
    t.equal(logged.length, 3, 'nothing more the second time')
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
    t.same((await client!.query('SELECT version FROM schemaversion ORDER BY version')).rows.map((row) => row.version), ['0', '1', '2', '3'])
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

t.test('released migrations never change: postgrator refuses a database that ran another text of them', async (t) => {
  const dir = path.join(import.meta.dirname, '..', '..', 'migrations')
  const released: Record<string, string> = {
    '001.do.collections.sql': 'a02be7b547f492bb5b30560d31ee3631',
    '002.do.sample-users.sql': '211b014cba20f4f0283a6382ed814f5f'
  }
  for (const [file, md5] of Object.entries(released)) {
    t.equal(createHash('md5').update(fs.readFileSync(path.join(dir, file), 'utf8')).digest('hex'), md5, `${file}: a change is a new file (migrations/README.md)`)
  }
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
  t.equal(redactedUrl('postgres://db/app?user=postgres&password=SECRET'), 'postgres://db/app?user=postgres&password=***', 'a password in the query string')
  t.equal(redactedUrl('postgres://u:one@db/app?sslmode=require&sslpassword=two&PASSWORD=three'),
    'postgres://u:***@db/app?sslmode=require&sslpassword=***&PASSWORD=***', 'every form of it')
  t.equal(redactedUrl('postgres://[db'), 'the database of DATABASE_URL', 'a URL that does not parse is not echoed')
})
