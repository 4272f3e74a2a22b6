import pg from 'pg'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { itemSerializer } from '../../../lib/postgres/item-serializer.js'
import { postgresRepository } from '../../../lib/postgres/repository.js'
import { jsonIntegerKey, jsonStringKey } from '../../../lib/postgres/sort-keys.js'
import { SAMPLE_USERS } from '../../../schemas/user.js'
import { migratedDatabase, testPool } from '../../helpers/postgres.js'
import { build } from '../../helpers/index.js'
import { StoredJson, readAll } from '../../../lib/repository.js'
import { ProductSchema } from '../../../schemas/product.js'
import { list, repositoryContract, type Item } from '../../helpers/repository-contract.js'

t.test('the PostgreSQL repository', async (t) => {
  /** A pool on a database of its own, ended with the test. */
  const pool = (url: string, options: pg.PoolConfig = {}) => testPool(t, url, options)
  const database = migratedDatabase

  repositoryContract(t, {
    empty: async () => postgresRepository<Item>(pool(await database()), 'products'),
    seeded: async (maxItems) => postgresRepository<Item>(pool(await database()), 'users', { sortKeys: { age: jsonIntegerKey('age'), name: jsonStringKey('name') }, maxItems }),
    bounded: async (maxItems, replicas) => {
      const url = await database()
      return Array.from({ length: replicas }, () => postgresRepository<Item>(pool(url), 'products', { maxItems }))
    }
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

  t.test('a query the database cannot serve becomes 503, a fault of ours stays an error of ours', async (t) => {
    const url = await database()
    const products = pool(url)
    await products.query('ALTER TABLE products RENAME TO gone')
    await t.rejects(list(postgresRepository<Item>(products, 'products')), { code: '42P01' }, 'an undefined table is our bug: not hidden as 503')
    await products.query('ALTER TABLE gone RENAME TO products')

    await products.query('CREATE FUNCTION slow() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$ LANGUAGE plpgsql')
    await products.query('CREATE TRIGGER slow BEFORE INSERT ON products FOR EACH ROW EXECUTE FUNCTION slow()')
    await t.rejects(postgresRepository<Item>(pool(url, { statement_timeout: 50 }), 'products').create({ productId: 1 }),
      { statusCode: 503, code: 'API_ERR_STORE_UNAVAILABLE', expose: true, headers: { 'retry-after': '5' }, cause: { code: '57014' } },
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
