import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import { projectRoot } from '../../../lib/project-root.js'
import { redactedUrl } from '../../../lib/postgres/connect.js'
import { migrate } from '../../../lib/postgres/migrations.js'
import { SAMPLE_USERS, type User } from '../../../schemas/user.js'
import { assertError, baseUrl, build, json, logSink, openStream, readBody, testDatabase, until } from '../../helpers/index.js'
import { tcpProxy, testPostgres } from '../../helpers/postgres.js'
import { PASSWORD, USER } from '../../helpers/postgres-server.js'

const SAMPLE_JSON = JSON.stringify(SAMPLE_USERS)
const BASIC = { authorization: `Basic ${Buffer.from('servant:server').toString('base64')}` }

function user (n: number): User {
  return { name: `User ${n}`, age: n, email: `user${n}@example.org`, registration_date: '2026-11-22' }
}

function write (app: FastifyInstance, method: 'POST' | 'PUT', url: string, payload: unknown) {
  return app.inject({ method, url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
}

/** The id of a 204 answer's `Location: /<collection>/<id>`. */
function createdId (res: LightMyRequestResponse): number {
  const id = /^\/\w+\/(\d+)$/.exec(String(res.headers.location))?.[1]
  if (res.statusCode !== 204 || id === undefined) throw new Error(`not created: ${res.statusCode} ${res.body}`)
  return Number(id)
}

/** The first answer other than 503 to a request repeated while the database comes back (10 s at most: a hang). */
async function answered (request: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  let res = await request()
  for (let tries = 0; res.statusCode === 503 && tries < 200; tries++) {
    await sleep(50)
    res = await request()
  }
  return res
}

/** Asserts the 503 of an unavailable database: JSON error, Retry-After, a message that says so. */
function assertUnavailable (t: Test, res: LightMyRequestResponse, what: string) {
  t.equal(res.statusCode, 503, `${what}: 503`)
  t.equal(res.headers['retry-after'], '5', `${what}: Retry-After`)
  t.match(json(res), { statusCode: 503, code: 'API_ERR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: 'The database is unavailable: retry later' }, `${what}: JSON error`)
}

t.test('the PostgreSQL store over HTTP', async (t) => {
  const server = await testPostgres()
  /** An app on `url`, with its store checked. */
  const instance = (url: string, env: Record<string, string> = {}) => build(t, { DATABASE_URL: url, ...env })

  t.test('two instances starting together on a fresh database: the sample users once, as 1 and 2', async (t) => {
    const url = await server.createDatabase()
    const apps = await Promise.all([instance(url), instance(url), instance(url)])
    for (const app of apps) {
      t.equal((await app.inject({ url: '/users' })).body, SAMPLE_JSON)
      t.same(json(await app.inject({ url: '/users/2' })), SAMPLE_USERS[1])
    }
    t.equal(createdId(await write(apps[0]!, 'POST', '/users', user(1))), 3, 'the next id is 3')
  })

  t.test('a write on one instance is read on the other', async (t) => {
    const url = await server.createDatabase()
    const [a, b] = [await instance(url), await instance(url)]
    const id = createdId(await write(a, 'POST', '/users', user(1)))
    t.same(json(await b.inject({ url: `/users/${id}` })), user(1), 'POST on a, GET on b')
    t.same(json(await b.inject({ url: `/user/${id}` })), user(1), 'and on /user')
    t.equal((await write(b, 'PUT', `/users/${id}`, user(2))).statusCode, 204)
    t.same(json(await a.inject({ url: `/users/${id}` })), user(2), 'PUT on b, GET on a')
    t.same(json(await a.inject({ url: '/users/list-all', headers: BASIC })), [...SAMPLE_USERS, user(2)], 'list-all on a')
    t.equal((await b.inject({ method: 'DELETE', url: `/user/${id}` })).statusCode, 204)
    assertError(t, await a.inject({ url: `/users/${id}` }), 404, `No user with userid ${id}`)

    const product = createdId(await write(b, 'POST', '/products', { productId: 7, name: 'Green tea' }))
    t.equal((await a.inject({ url: `/products/${product}` })).body, '{"productId":7,"name":"Green tea"}', 'products too')
  })

  t.test('200 concurrent POSTs split across two instances: 200 distinct ids, each listed once', async (t) => {
    const url = await server.createDatabase()
    const apps = [await instance(url), await instance(url)]
    const numbers = Array.from({ length: 200 }, (_, n) => n + 1)
    const ids = await Promise.all(numbers.map(async (n) => createdId(await write(apps[n % 2]!, 'POST', '/users', user(n)))))
    t.equal(new Set(ids).size, 200, '200 distinct ids')
    t.ok(ids.every((id) => id > 2), 'after the sample users')

    for (const app of apps) {
      const listed = json<User[]>(await app.inject({ url: '/users' }))
      t.equal(listed.length, 202, 'every user listed')
      t.same(listed.slice(2).map((item) => item.age).sort((x, y) => x - y), numbers, 'each posted user exactly once')
    }
    // Each id names the user that was posted with it, on either instance; the list is in id order.
    const byId = new Map(ids.map((id, index) => [id, numbers[index]!]))
    const read = await Promise.all(ids.map((id) => apps[id % 2]!.inject({ url: `/users/${id}` })))
    t.ok(read.every((res, index) => json<User>(res).age === numbers[index]), 'GET /users/<id> is the user posted as <id>')
    const inIdOrder = [...byId.keys()].sort((x, y) => x - y).map((id) => byId.get(id))
    t.same(json<User[]>(await apps[0]!.inject({ url: '/users' })).slice(2).map((item) => item.age), inIdOrder, 'listed in id order')
  })

  t.test('racing PUTs and DELETEs on two instances lose nothing acknowledged', async (t) => {
    const url = await server.createDatabase()
    const [a, b] = [await instance(url), await instance(url)]
    const ids = []
    for (let n = 0; n < 30; n++) ids.push(createdId(await write(a, 'POST', '/products', { productId: n })))
    const raced = await Promise.all(ids.map(async (id, n) => {
      const doomed = n % 3 === 0
      const answers = await Promise.all([
        write(a, 'PUT', `/products/${id}`, { productId: id, name: 'a' }),
        write(b, 'PUT', `/products/${id}`, { productId: id, name: 'b' }),
        ...(doomed ? [a.inject({ method: 'DELETE', url: `/products/${id}` }), b.inject({ method: 'DELETE', url: `/products/${id}` })] : [])
      ])
      return { id, doomed, statuses: answers.map((res) => res.statusCode) }
    }))
    for (const { id, doomed, statuses } of raced) {
      const [putA, putB, ...deletes] = statuses
      const final = [await a.inject({ url: `/products/${id}` }), await b.inject({ url: `/products/${id}` })]
      t.equal(final[0]!.body, final[1]!.body, `${id}: both instances read the same`)
      if (doomed) {
        t.same(deletes.sort(), [204, 404], `${id}: one DELETE wins`)
        t.ok([putA, putB].every((status) => status === 204 || status === 404), `${id}: each PUT applied or too late`)
        t.equal(final[0]!.statusCode, 404, `${id}: gone`)
      } else {
        t.same([putA, putB], [204, 204], `${id}: both PUTs acknowledged`)
        t.match(json(final[0]!), { productId: id, name: /^[ab]$/ }, `${id}: the last PUT is what is stored`)
      }
    }
    t.equal(json<unknown[]>(await b.inject({ url: '/products' })).length, 20, '30 - 10 deleted')
  })

  t.test('a restart keeps everything, and ids are not given again', async (t) => {
    const url = await server.createDatabase()
    const first = await instance(url)
    const ids = [createdId(await write(first, 'POST', '/users', user(1))), createdId(await write(first, 'POST', '/users', user(2)))]
    await first.inject({ method: 'DELETE', url: `/users/${ids[1]}` })
    const product = createdId(await write(first, 'POST', '/products', { productId: 1 }))
    const before = (await first.inject({ url: '/users' })).body
    await first.close()

    const second = await instance(url)
    t.equal((await second.inject({ url: '/users' })).body, before, 'the users')
    t.equal((await second.inject({ url: `/products/${product}` })).body, '{"productId":1}', 'the products')
    t.equal(createdId(await write(second, 'POST', '/users', user(3))), ids[1]! + 1, 'the deleted id stays unused')
  })

  // These wait, each on a database and a proxy of its own: on retries, on a timeout. Side by side,
  // they wait about as long as the longest.
  t.test('the database out of reach: at start-up, hanging, stopped', { jobs: 4 }, async (t) => {
    t.test('start-up: an unreachable database is retried for DATABASE_STARTUP_TIMEOUT, then named in the error', async (t) => {
      const closed = await tcpProxy(t, server.port)
      closed.blackhole()
      const url = `postgres://postgres:hunter2@127.0.0.1:${closed.port}/postgres`
      const sink = logSink('warn')
      const started = Date.now()
      // Each attempt hangs until its connect timeout (100 ms); with retries after 250 and 500 ms, 3
      // attempts fit in 1.5 s, no more; at least 2 unless the first takes 12 times too long to time out.
      const failed = await build(t, { DATABASE_URL: url, DATABASE_STARTUP_TIMEOUT: '1500', DATABASE_STATEMENT_TIMEOUT: '100' }, { logger: sink.logger })
        .then(() => undefined, (err: Error) => err)
      t.match(failed?.message, new RegExp(`^The database at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${closed.port}/postgres is unreachable \\(attempts: \\d+\\): .*timeout`))
      const attempts = Number(/attempts: (\d+)/.exec(failed?.message ?? '')?.[1])
      t.ok(attempts >= 2 && attempts <= 3, `${attempts} attempts within DATABASE_STARTUP_TIMEOUT, not more`)
      t.ok(Date.now() - started < 30_000, 'gave up: no hang')
      const retries = sink.entries.filter((entry) => entry.msg === 'database not reachable yet: retrying')
      t.equal(retries.length, attempts - 1, 'each retry is logged')
      t.notMatch(JSON.stringify(sink.entries), /hunter2/, 'the password is never logged')
    })

    t.test('start-up: a database that comes up within DATABASE_STARTUP_TIMEOUT is waited for', async (t) => {
      const url = await server.createDatabase()
      const proxy = await tcpProxy(t, server.port)
      proxy.blackhole()
      const held = proxy.held()
      const sink = logSink('warn')
      const app = build(t, { DATABASE_URL: url.replace(`:${server.port}/`, `:${proxy.port}/`), DATABASE_STARTUP_TIMEOUT: '60000' }, { logger: sink.logger })
      // The service is waiting on a connection that goes nowhere: the database comes back.
      await held
      proxy.restore()
      t.equal((await (await app).inject({ url: '/users' })).body, SAMPLE_JSON)
      t.ok(sink.entries.some((entry) => entry.msg === 'database not reachable yet: retrying'), 'it was retried')
    })

    t.test('a hanging database: 503 within the statement timeout, never a hang; then service resumes', async (t) => {
      const url = await server.createDatabase()
      const proxy = await tcpProxy(t, server.port)
      const app = await instance(url.replace(`:${server.port}/`, `:${proxy.port}/`), { DATABASE_STATEMENT_TIMEOUT: '1000' })
      t.equal((await app.inject({ url: '/users' })).statusCode, 200)
      proxy.blackhole()
      const started = Date.now()
      const answers = await Promise.all([
        app.inject({ url: '/users' }),
        write(app, 'POST', '/users', user(1)),
        app.inject({ url: '/ready' })
      ])
      t.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms with a 1 s timeout: no hang`)
      for (const [index, res] of answers.entries()) assertUnavailable(t, res, ['GET /users', 'POST /users', 'GET /ready'][index]!)
      t.equal((await app.inject({ url: '/hello' })).statusCode, 200, 'other endpoints work')
      proxy.restore()
      t.equal((await answered(() => app.inject({ url: '/users' }))).body, SAMPLE_JSON, 'back by itself')
    })

    t.test('the database stopped: 503 on the collections, the rest works, /ready 503; back by itself', async (t) => {
      const url = await server.createDatabase()
      const proxy = await tcpProxy(t, server.port)
      const sink = logSink('warn')
      const app = await build(t, { DATABASE_URL: url.replace(`:${server.port}/`, `:${proxy.port}/`), DATABASE_STATEMENT_TIMEOUT: '1000' }, { logger: sink.logger })
      const id = createdId(await write(app, 'POST', '/products', { productId: 1 }))
      t.same(json(await app.inject({ url: '/ready' })), { status: 'ready' })
      await proxy.stopped()

      const started = Date.now()
      assertUnavailable(t, await app.inject({ url: '/users' }), 'GET /users')
      assertUnavailable(t, await app.inject({ url: '/users/1' }), 'GET /users/1')
      assertUnavailable(t, await write(app, 'POST', '/users', user(1)), 'POST /users')
      assertUnavailable(t, await write(app, 'PUT', `/products/${id}`, { productId: 2 }), 'PUT /products/<id>')
      assertUnavailable(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }), 'DELETE /products/<id>')
      assertUnavailable(t, await app.inject({ url: '/list-all/users', headers: BASIC }), 'GET /list-all/users')
      assertUnavailable(t, await app.inject({ url: '/ready' }), 'GET /ready')
      t.ok(Date.now() - started < 10_000, 'no hang')
      t.equal((await app.inject({ url: '/health' })).statusCode, 200, 'liveness is not readiness')
      t.equal((await app.inject({ url: '/hello' })).statusCode, 200, 'other endpoints work')
      t.equal((await app.inject({ url: '/colors' })).statusCode, 206)
      t.ok(sink.entries.some((entry) => entry.msg === 'request failed' && (entry.err as { code?: string }).code === 'API_ERR_STORE_UNAVAILABLE'),
        'the failure is logged with its cause')

      proxy.restore()
      t.equal((await answered(() => app.inject({ url: `/products/${id}` }))).body, '{"productId":1}', 'back by itself, data intact')
      t.same(json(await app.inject({ url: '/ready' })), { status: 'ready' })
    })
  })
})

/** `count` users written straight into a database (migrated by an app first), as JSON.stringify writes them; `pad` lengthens their e-mails (up to their bound, 254 characters in all). */
async function insertUsers (url: string, count: number, pad = 0): Promise<void> {
  const client = new pg.Client(url)
  await client.connect()
  try {
    await client.query(`INSERT INTO users (item) SELECT ('{"name":"User ' || g || '","age":' || (g % 100) ||
      ',"email":"' || repeat('x', $2) || 'user' || g || '@example.org","registration_date":"2026-11-22"}')::json FROM generate_series(1, $1) g`, [count, pad])
  } finally {
    await client.end()
  }
}

/** Users of about 350 bytes of JSON each: 22 MB and 50 MB of them. */
const LONG_LIST = 64_000
const LONGER_LIST = 144_000

t.test('long lists on PostgreSQL', async (t) => {
  const server = await testPostgres()

  t.test('the database fails or hangs while a long list is sent: a cut body, logged; then service resumes', async (t) => {
    for (const failure of ['stopped', 'hanging'] as const) {
      const url = await server.createDatabase()
      const proxy = await tcpProxy(t, server.port)
      const sink = logSink('warn')
      const app = await build(t, { DATABASE_URL: url.replace(`:${server.port}/`, `:${proxy.port}/`), DATABASE_STATEMENT_TIMEOUT: '1000' }, { logger: sink.logger })
      // 22 MB of JSON: more than the sockets of both sides hold (a few MB each on the loopback).
      await insertUsers(url, LONG_LIST, 230)
      await app.listen({ port: 0, host: '127.0.0.1' })
      const res = await openStream(`${baseUrl(app)}/users`)
      t.equal(res.statusCode, 200, `${failure}: the list has begun`)
      t.equal(res.headers['user-count'], String(LONG_LIST + 2))
      await new Promise((resolve) => res.once('data', resolve))
      res.pause()
      // Read before the failure: a fetch it cuts ends the response at once, and a paused response
      // whose connection closes is over before anyone listens (a hang on a loaded machine).
      const reading = readBody(res)
      if (failure === 'stopped') await proxy.stopped()
      else proxy.blackhole()
      res.resume()
      const { body, complete } = await reading
      t.notOk(complete, `${failure}: the client sees the body is cut`)
      t.ok(body.length > 0 && !body.endsWith(']'), `${failure}: the list is incomplete`)
      await until(() => sink.entries.some((entry) => entry.msg === 'list failed: the response is cut short'))
      t.match(sink.entries.find((entry) => entry.msg === 'list failed: the response is cut short'),
        { level: 50, items: Number, err: { code: 'API_ERR_STORE_UNAVAILABLE' } }, `${failure}: logged, with how far it got`)
      proxy.restore()
      const again = await answered(() => app.inject({ url: '/users', headers: { range: 'id; order desc; limit 1' } }))
      t.equal(again.statusCode, 206, `${failure}: back by itself`)
      t.same(json(again), [lastUser()])
      t.equal(JSON.parse((await app.inject({ url: '/users' })).body).length, LONG_LIST + 2, `${failure}: the whole list again`)
    }
  })

  t.test('long lists leave two connections of the pool to the rest: other requests are served meanwhile; a list finds a connection or gets 503 in time', async (t) => {
    const url = await server.createDatabase()
    // A pool of three: one connection for lists, two for the rest. No ceiling: the collection holds
    // more users than the default's. The statement timeout is the default's, also the bound of a
    // list's wait for its connection: a shorter one cut the stalled list's own FETCH on a machine
    // with a load of 16, which gave its connection to the second list.
    const app = await build(t, { DATABASE_URL: url, DATABASE_POOL_SIZE: '3', DATABASE_STATEMENT_TIMEOUT: '5000', COLLECTION_MAX_ITEMS: '0' })
    // 50 MB of JSON: more than the sockets of both sides hold (a few MB each on the loopback).
    await insertUsers(url, LONGER_LIST, 230)
    await app.listen({ port: 0, host: '127.0.0.1' })
    // A client that reads the beginning of a long list, then stops: its list holds a connection.
    const stalled = await openStream(`${baseUrl(app)}/users`)
    await new Promise((resolve) => stalled.once('data', resolve))
    stalled.pause()

    const started = Date.now()
    const refused = await app.inject({ url: '/users' })
    assertUnavailable(t, refused, 'a second long list, while the first holds the lists\' connection')
    t.ok(Date.now() - started < 60_000, 'in time: no hang')
    t.same(json(await app.inject({ url: '/users/2' })), SAMPLE_USERS[1], 'other requests have their connection')
    t.equal(createdId(await write(app, 'POST', '/users', user(1))), LONGER_LIST + 3, 'writes too')
    t.equal((await app.inject({ url: '/users', headers: { range: 'id; limit 2' } })).statusCode, 206, 'and short pages')
    t.same(json(await app.inject({ url: '/ready' })), { status: 'ready' }, 'and readiness')

    stalled.destroy()
    const listed = await answered(() => app.inject({ url: '/users' }))
    t.equal(json<User[]>(listed).length, LONGER_LIST + 3, 'the client gone, its connection serves the next list')
  })
})

/** The last user insertUsers(url, LONG_LIST, 230) writes. */
function lastUser (): User {
  return { name: `User ${LONG_LIST}`, age: LONG_LIST % 100, email: `${'x'.repeat(230)}user${LONG_LIST}@example.org`, registration_date: '2026-11-22' }
}

/**
 * deploy/README.md's two roles, as its SQL makes them (names made unique: roles are the server's,
 * shared by every test process): the database, and the URLs of the migration role and the service's.
 */
async function twoRoles (): Promise<{ migrator: string, app: string, database: string }> {
  const { port } = await testPostgres()
  const readme = fs.readFileSync(path.join(projectRoot, 'deploy', 'README.md'), 'utf8')
  const sql = /```sql\n(CREATE ROLE servant_migrator[^]*?)```/.exec(readme)?.[1]
  if (sql === undefined) throw new Error('deploy/README.md has no SQL block of the two roles')
  const suffix = `${process.pid}_${Date.now()}`
  const named = sql.replaceAll('servant_migrator', `migrator_${suffix}`).replaceAll('servant_app', `app_${suffix}`)
    .replace(/\bDATABASE servant\b/g, `DATABASE roles_${suffix}`).replace('\\connect servant', `\\connect roles_${suffix}`)
  const [before, after] = named.split(`\\connect roles_${suffix}\n`) as [string, string]
  const admin = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`
  for (const [database, text] of [['postgres', before], [`roles_${suffix}`, after]] as const) {
    const client = new pg.Client(admin(database))
    await client.connect()
    try {
      for (const statement of text.split(/;\s*\n/).map((part) => part.replace(/^--.*$/gm, '').trim()).filter(Boolean)) await client.query(statement)
    } finally {
      await client.end()
    }
  }
  const role = (name: string, password: string) => `postgres://${name}_${suffix}:${password}@127.0.0.1:${port}/roles_${suffix}`
  return { migrator: role('migrator', 'migrator-password'), app: role('app', 'app-password'), database: admin(`roles_${suffix}`) }
}

t.test('two roles, as deploy/README.md makes them: the migrations by DATABASE_MIGRATION_URL, the service with a role that only reads and writes rows', async (t) => {
  const { migrator, app: appUrl, database } = await twoRoles()
  const app = await build(t, { DATABASE_URL: appUrl, DATABASE_MIGRATION_URL: migrator })
  const id = createdId(await write(app, 'POST', '/users', user(1)))
  t.same(json(await app.inject({ url: `/users/${id}` })), user(1), 'the service reads and writes with its role')
  t.equal((await app.inject({ url: '/users', headers: { range: 'id' } })).headers['total-count'], '3', 'the sizes kept by the triggers, which run as it')

  const admin = new pg.Client(database)
  await admin.connect()
  t.teardown(() => admin.end())
  const owners = await admin.query("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")
  t.same(owners.rows.map((row) => row.tableowner), [new URL(migrator).username], 'every table is the migration role\'s')
  const asApp = new pg.Client(appUrl)
  await asApp.connect()
  t.teardown(() => asApp.end())
  await t.rejects(asApp.query('CREATE TABLE intruder (x int)'), { code: '42501' }, 'the service\'s role may not change the schema')
  await t.rejects(asApp.query('DROP TABLE users'), { code: '42501' })
})

t.test('MIGRATE_ON_START=false: a database behind this version is refused at start, naming the migrate command; one up to date is used', async (t) => {
  const url = await testDatabase()
  const refused = await build(t, { DATABASE_URL: url, MIGRATE_ON_START: 'false' }).then(() => undefined, (err: Error & { code?: string }) => err)
  t.equal(refused?.code, 'API_ERR_SCHEMA_BEHIND')
  // Which database it read, and, at migration 0, that DATABASE_URL may name another.
  t.equal(refused?.message.replace(/needs \d+:/, 'needs N:'), `The database ${redactedUrl(url)} is at migration 0; this version needs N: apply the migrations first (\`node dist/bundle/server.js migrate\`, or MIGRATE_ON_START=true), or name in DATABASE_URL the database they were applied to`)
  const client = new pg.Client(url)
  await client.connect()
  await migrate(client, { info () {} })
  await client.end()
  const app = await build(t, { DATABASE_URL: url, MIGRATE_ON_START: 'false' })
  t.equal((await app.inject({ url: '/users' })).body, SAMPLE_JSON, 'migrated beforehand: served')
})
