import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { loadConfig } from '../../lib/config/load.js'
import { Batcher, REWORDED_MIGRATIONS, isUnavailable, itemSerializer, jsonIntegerKey, jsonStringKey, migrate, migrateDatabase, postgresRepository, redactedUrl, schemaVersions, storeUnavailable } from '../../lib/postgres.js'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { testPostgres } from '../helpers/postgres.js'
import { build } from '../helpers/index.js'
import { StoredJson, readAll } from '../../lib/repository.js'
import { ProductSchema } from '../../schemas/product.js'
import { list, repositoryContract, type Item } from '../helpers/repository-contract.js'

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
    seeded: async () => postgresRepository<Item>(pool(await database()), 'users', { sortKeys: { age: jsonIntegerKey('age'), name: jsonStringKey('name') } })
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
      { version: 3, name: 'auth-failures', msg: 'database migration applied' },
      { version: 4, name: 'lists', msg: 'database migration applied' }
    ])
    await migrate(client, logger)
    t.equal(logged.length, 4, 'nothing more the second time')
    const { rows } = await client.query('SELECT id, item FROM users ORDER BY id')
    t.same(rows, [{ id: '1', item: SAMPLE_USERS[0] }, { id: '2', item: SAMPLE_USERS[1] }], 'the sample users once, as 1 and 2')
  })

  t.test('migrateDatabase (the release step): DATABASE_MIGRATION_URL before DATABASE_URL; the version after; nothing to migrate is said', async (t) => {
    const migrating = await server.createDatabase()
    const serving = await server.createDatabase()
    const quiet = { info () {}, warn () {} }
    const config = loadConfig({ DATABASE_URL: serving, DATABASE_MIGRATION_URL: migrating })
    t.equal(await migrateDatabase(config, quiet), 4, 'at the latest migration')
    const version = async (url: string) => {
      const client = new pg.Client(url)
      await client.connect()
      try {
        return (await schemaVersions(client)).database
      } finally {
        await client.end()
      }
    }
    t.equal(await version(migrating), 4, 'the migration URL\'s database was migrated')
    t.equal(await version(serving), 0, 'the service\'s was not')
    t.equal(await migrateDatabase(loadConfig({ DATABASE_URL: serving }), quiet), 4, 'without one, DATABASE_URL\'s')
    await t.rejects(migrateDatabase(loadConfig({}), quiet), { code: 'FST_ERR_NO_DATABASE' })
  })

  t.test('migrations: a database that ran the former wording of 001 and 002 starts; any other text of them is refused', async (t) => {
    const url = await server.createDatabase()
    const client = new pg.Client(url)
    await client.connect()
    t.teardown(() => client.end())
    await migrate(client, log)
    const records = async () => (await client.query('SELECT version::int, md5 FROM schemaversion WHERE version <= 2 ORDER BY version')).rows
    const present = await records()
    // As a database migrated before the rewording holds them.
    for (const [version, md5] of REWORDED_MIGRATIONS) await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = $2', [md5, version])
    await migrate(client, log)
    t.same(await records(), present, 'the former checksums carried forward to the files\' present ones')
    await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = 1', ['0123456789abcdef0123456789abcdef'])
    await t.rejects(migrate(client, log), /MD5 checksum failed for migration \[1\]/, 'a text that is neither is refused')
  })

  t.test('migrations: replicas starting together apply each once', async (t) => {
    const url = await server.createDatabase()
    const clients = Array.from({ length: 6 }, () => new pg.Client(url))
    await Promise.all(clients.map((client) => client.connect()))
    t.teardown(() => Promise.all(clients.map((client) => client.end())))
    await Promise.all(clients.map((client) => migrate(client, log)))
    const [client] = clients
    t.same((await client!.query('SELECT version FROM schemaversion ORDER BY version')).rows.map((row) => row.version), ['0', '1', '2', '3', '4'])
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

  t.test('a long list counts and reads in one snapshot: a write between its statements is in neither', async (t) => {
    const url = await database()
    const lists = pool(url)
    const writer = pool(url)
    const repository = postgresRepository<Item>(lists, 'products')
    for (let n = 1; n <= 100; n++) await repository.create({ productId: n })
    // The list's connection: once its size is read, another connection writes, before the cursor is declared.
    const connect = lists.connect.bind(lists) as (callback?: unknown) => Promise<pg.PoolClient>
    let writes = 0
    // (pool.query takes its connections with a callback: those are left alone.)
    lists.connect = (async (callback?: unknown) => {
      if (callback !== undefined) return connect(callback)
      const client = await connect()
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>
      // The connection goes back to the pool afterwards: its other queries (and callbacks) are left alone.
      client.query = (async (...args: unknown[]) => {
        const [config] = args as [pg.QueryConfig]
        const result = await query(...args)
        if (args.length === 1 && writes === 0 && /collection_sizes/.test(String(config.text))) {
          writes++
          await writer.query('INSERT INTO products (item) VALUES (\'{"productId":0}\'), (\'{"productId":0}\')')
        }
        return result
      }) as typeof client.query
      return client
    }) as typeof lists.connect
    const listing = await repository.listing()
    const items = await readAll(listing)
    t.equal(writes, 1, 'the write came between the statements')
    t.equal(listing.total, 100, 'the size before the write')
    t.equal(items.length, 100, 'the items before the write: as many as the size says')
    t.equal((await list(repository)).length, 102, 'the next list has them')
  })

  t.test('items written by the item schema\'s serializer are listed as stored; others are parsed', async (t) => {
    const url = await database()
    const products = pool(url)
    const serializer = itemSerializer<Item>(ProductSchema)
    const repository = postgresRepository<Item>(products, 'products', { serializer })
    await repository.create({ name: 'Pie', productId: 1 })
    await products.query('INSERT INTO products (item) VALUES (\'{"name":"Old","productId":2}\')')
    await repository.create({ productId: 3 })
    t.same((await products.query('SELECT item::text AS item, serialized_by FROM products ORDER BY id')).rows, [
      { item: '{"productId":1,"name":"Pie"}', serialized_by: serializer.fingerprint },
      { item: '{"name":"Old","productId":2}', serialized_by: null },
      { item: '{"productId":3}', serialized_by: serializer.fingerprint }
    ], 'stored as the schema writes them, and marked so')
    const expected = [new StoredJson('{"productId":1,"name":"Pie"}'), { name: 'Old', productId: 2 }, new StoredJson('{"productId":3}')]
    for (const query of [{}, { page: { offset: 0, limit: 3, order: 'asc' as const } }]) {
      const listing = await repository.listing(query)
      const read: unknown[] = []
      for await (const piece of listing) read.push(...piece)
      t.same(read, expected, `${JSON.stringify(query)}: the stored JSON, or the parsed item`)
      t.ok(read[0] instanceof StoredJson && !(read[1] instanceof StoredJson), 'which is which')
    }
    t.same(await repository.get(1), { productId: 1, name: 'Pie' }, 'read one at a time: parsed')
    t.same(await Promise.all([1, 2, 3, 4].map((id) => repository.entry(id))),
      [new StoredJson('{"productId":1,"name":"Pie"}'), { name: 'Old', productId: 2 }, new StoredJson('{"productId":3}'), undefined],
      'an entry by id: the stored JSON, or the parsed item, or nothing')
    t.ok(await repository.entry(1) instanceof StoredJson, 'the stored JSON as such')
    t.equal(await repository.replace(2, { name: 'New', productId: 2 }), true)
    t.equal((await products.query('SELECT item::text AS item FROM products WHERE id = 2')).rows[0].item, '{"productId":2,"name":"New"}', 'a replacement is written by the schema too')
    const other = postgresRepository<Item>(products, 'products', { serializer: itemSerializer<Item>(Type.Object({ productId: Type.Integer() })) })
    t.same(await list(other), [{ productId: 1, name: 'Pie' }, { productId: 2, name: 'New' }, { productId: 3 }], 'another schema\'s repository parses them all')
    const pieces = await other.listing()
    const read: unknown[] = []
    for await (const piece of pieces) read.push(...piece)
    t.notOk(read.some((entry) => entry instanceof StoredJson), 'none is taken for its own')
    t.same(await other.entry(1), { productId: 1, name: 'Pie' }, 'nor by id')
  })

  t.test('reads by id, inserts and short lists made together share one statement, each call its own answer', async (t) => {
    const url = await database()
    const users = pool(url)
    const statements: string[] = []
    const query = users.query.bind(users) as (config: pg.QueryConfig | string, values?: unknown[]) => Promise<pg.QueryResult>
    // A statement sent while `gate` is set waits for it: in flight for as long as the test says.
    let gate: Promise<void> | undefined
    users.query = (async (config: pg.QueryConfig | string, values?: unknown[]) => {
      statements.push(typeof config === 'string' ? config : config.text)
      await gate
      return query(config, values)
    }) as typeof users.query
    const repository = postgresRepository<Item>(users, 'users', { serializer: itemSerializer<Item>(ProductSchema), batchConcurrency: 1 })

    const found = await Promise.all([2, 1, 2, 99].map((id) => repository.get(id)))
    t.same(found, [SAMPLE_USERS[1], SAMPLE_USERS[0], SAMPLE_USERS[1], undefined], 'each read its item, twice for an id asked twice, none for no row')
    t.not(found[0], found[2], 'each call its own copy')
    t.equal(statements.length, 1, 'one statement')

    statements.length = 0
    const items = [{ productId: 1 }, { productId: 2, name: 'Two' }, { productId: 1 }, { productId: 3 }]
    const ids = await Promise.all(items.map((item) => repository.create(item)))
    t.equal(statements.length, 1, 'the inserts made together: one statement')
    t.same([...ids].sort((a, b) => a - b), [3, 4, 5, 6], 'a new id for each, even for items alike')
    statements.length = 0
    const stored = await users.query<{ id: string, item: string }>('SELECT id, item::text AS item FROM users WHERE id = ANY($1::bigint[])', [ids])
    const texts = new Map(stored.rows.map((row) => [Number(row.id), row.item]))
    t.same(ids.map((id) => texts.get(id)), items.map((item) => JSON.stringify(item)), 'each id holds the item of its call')

    statements.length = 0
    const listings = await Promise.all([1, 2, 3].map(() => repository.listing()))
    t.equal(statements.length, 1, 'the lists asked together: one statement')
    t.same(listings.map((listing) => listing.total), [6, 6, 6], 'one snapshot for all')
    t.not(listings[0]!.items![0], listings[1]!.items![0], 'each list its own items')
    t.same(await readAll(listings[2]!), [SAMPLE_USERS[0], SAMPLE_USERS[1], ...items], 'the whole list')

    statements.length = 0
    // One statement in flight at a time (batchConcurrency 1): the reads made meanwhile wait for it, and go together.
    let open = () => {}
    gate = new Promise((resolve) => { open = resolve })
    const first = repository.get(1)
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(statements.length, 1, 'the first read leaves at once')
    const later = Promise.all([3, 4, 5].map((id) => repository.get(id)))
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(statements.length, 1, 'the next wait while it is in flight')
    gate = undefined
    open()
    t.same(await first, SAMPLE_USERS[0])
    t.same(await later, [items[0], items[1], items[2]], 'then go together')
    t.equal(statements.length, 2, 'in one statement')

    const afterWrite = await repository.create({ productId: 9 })
    t.same(await repository.get(afterWrite), { productId: 9 }, 'a read after an acknowledged insert sees it')
  })

  t.test('a sort key reads its field from the text: a field name that is not a plain name is refused', async (t) => {
    t.throws(() => jsonStringKey('name\''), TypeError)
    t.throws(() => jsonIntegerKey('a b'), TypeError)
  })

  t.test('a query the database cannot serve becomes 503, a fault of ours stays an error of ours', async (t) => {
    const url = await database()
    const products = pool(url)
    await products.query('ALTER TABLE products RENAME TO gone')
    await t.rejects(list(postgresRepository<Item>(products, 'products')), { code: '42P01' }, 'an undefined table is our bug: not hidden as 503')
    await products.query('ALTER TABLE gone RENAME TO products')

    await products.query('CREATE FUNCTION slow() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$ LANGUAGE plpgsql')
    await products.query('CREATE TRIGGER slow BEFORE INSERT ON products FOR EACH ROW EXECUTE FUNCTION slow()')
    await t.rejects(postgresRepository<Item>(pool(url, { statement_timeout: 50 }), 'products').create({ productId: 1 }),
      { statusCode: 503, code: 'FST_ERR_STORE_UNAVAILABLE', expose: true, headers: { 'retry-after': '5' }, cause: { code: '57014' } },
      'a statement timeout is 503, with its cause')
    t.same(await list(postgresRepository<Item>(products, 'products')), [], 'and nothing was written')
    const together = await Promise.allSettled([1, 2, 3].map((productId) => postgresRepository<Item>(pool(url, { statement_timeout: 50 }), 'products').create({ productId })))
    t.same(together.map((outcome) => outcome.status), ['rejected', 'rejected', 'rejected'], 'inserts of separate repositories fail each')
    const repository = postgresRepository<Item>(pool(url, { statement_timeout: 50 }), 'products')
    const batch = await Promise.allSettled([1, 2, 3].map((productId) => repository.create({ productId })))
    t.match(batch, [1, 2, 3].map(() => ({ status: 'rejected', reason: { statusCode: 503, cause: { code: '57014' } } })), 'a batch that times out: 503 for each of its calls')
    t.same(await list(postgresRepository<Item>(products, 'products')), [], 'and none of it was written')
  })

  t.test('GET by id sends the stored text when this schema wrote it, and re-serializes any other', async (t) => {
    const url = await database()
    const app = await build(t, { DATABASE_URL: url })
    const db = pool(url)
    const created = await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
    t.equal(created.headers.location, '/users/3')
    const { rows } = await db.query<{ item: string, serialized_by: string }>('SELECT item::text AS item, serialized_by FROM users WHERE id = 3')
    t.equal(rows[0]!.item, '{"name":"Ada","age":36,"email":"ada@engine.org","registration_date":"1843-07-01"}', 'stored as the schema writes it')
    // The same item written otherwise (an escape the serializer does not write): sent as stored
    // while marked as this schema's, re-serialized once it is not.
    const escaped = '{"name":"Ad\\u0061","age":36,"email":"ada@engine.org","registration_date":"1843-07-01"}'
    await db.query('UPDATE users SET item = $1 WHERE id = 3', [escaped])
    const asStored = await app.inject({ url: '/users/3' })
    t.equal(asStored.statusCode, 200)
    t.equal(asStored.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(asStored.body, escaped, 'the stored text, as it is')
    t.equal(asStored.headers['content-length'], String(Buffer.byteLength(escaped)))
    await db.query('UPDATE users SET serialized_by = $1 WHERE id = 3', ['another-schema'])
    t.equal((await app.inject({ url: '/users/3' })).body, rows[0]!.item, 'written by another schema: parsed and serialized again')
    t.equal((await app.inject({ url: '/users/1' })).body, JSON.stringify(SAMPLE_USERS[0]), 'a sample user of migrations/002 (no serializer): parsed and serialized')
    t.equal((await app.inject({ url: '/user/3' })).body, rows[0]!.item, 'the same by /user')
    t.equal((await app.inject({ url: '/users/4' })).statusCode, 404)
  })
})

t.test('Batcher: calls made together go in one run, at most maxCalls and maxWeight at a time, concurrency runs in flight', async (t) => {
  const runs: string[][] = []
  const pending: Array<() => void> = []
  const batcher = new Batcher<string, string>(async (inputs) => {
    runs.push(inputs)
    await new Promise<void>((resolve) => pending.push(resolve))
    if (inputs.includes('fail')) throw new Error('failed')
    return inputs.map((input) => input.toUpperCase())
  }, { concurrency: 2, maxCalls: 3, maxWeight: 4, weight: (input) => input.length })
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  const calls = ['a', 'b', 'c', 'd', 'eeeeee', 'f'].map((input) => batcher.add(input))
  await settle()
  t.same(runs, [['a', 'b', 'c'], ['d']], 'three at most; then weight 4 at most (d + eeeeee is heavier), two runs in flight')
  const failing = t.rejects(batcher.add('fail'), /failed/, 'a failed run fails its call')
  while (pending.length > 0) {
    pending.shift()!()
    await settle()
  }
  t.same(runs, [['a', 'b', 'c'], ['d'], ['eeeeee'], ['f'], ['fail']],
    'as runs end, the next: a call heavier than maxWeight alone, then what weighs 4 at most')
  t.same(await Promise.all(calls), ['A', 'B', 'C', 'D', 'EEEEEE', 'F'], 'each call its own output')
  await failing

  const failingTogether = new Batcher<number, number>(async () => { throw new Error('down') }, { concurrency: 1, maxCalls: 10 })
  t.same((await Promise.allSettled([1, 2].map((n) => failingTogether.add(n)))).map((outcome) => outcome.status), ['rejected', 'rejected'],
    'and every call of it')
})

t.test('released migrations never change (but for the comments of REWORDED_MIGRATIONS, carried forward)', async (t) => {
  const dir = path.join(import.meta.dirname, '..', '..', 'migrations')
  const released: Record<string, string> = {
    '001.do.collections.sql': '87acb2d0c9c8217b9308538f19cd7f61',
    '002.do.sample-users.sql': '74dd1ab7e643fc8b640534af6526c704',
    '003.do.auth-failures.sql': '4b7ac0ca6285d0ae28292c09975c8e57',
    '004.do.lists.sql': '6168d62341ac12e5a1f719df9b944b5b'
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
