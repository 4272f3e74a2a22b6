import http from 'node:http'
import v8 from 'node:v8'
import vm from 'node:vm'
import type { FastifyInstance, RouteOptions } from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import type { Repository } from '../../lib/repository.js'
import { SAMPLE_USERS, type User } from '../../schemas/user.js'
import { baseUrl, build, testDatabase } from '../helpers/index.js'

// Lists of a large collection, read by several slow clients at once, on both stores: the service's
// memory stays bounded (the lists are streamed with backpressure, not built whole), /health is
// answered meanwhile, and what the clients read is the list. Before lists were streamed, this test
// saw the RSS grow by 997 MB on the memory store and /health take 6.4 s (and the PostgreSQL one did
// not end within tap's 300 s).

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

const USERS = 100_000
/** A user is about 480 bytes of JSON, its name and e-mail address within their bounds: a list is 48 MB. */
const PAD = 'x'.repeat(200)
const CLIENTS = 8
/** What each slow client reads of its list before it goes away: 8 MiB of its 48 MB. */
const READ_BYTES = 8 * 1024 * 1024
/** The memory is measured each time the clients together have read this much more. */
const SAMPLE_BYTES = 8 * 1024 * 1024
/**
 * The bound on the growth of the RSS (after a full GC) while the clients read: about ten times
 * the 4–23 MB measured with lists twice as long, and below the lists being read (8 × 48 MB, 67 MB
 * of which are read); building each list whole, as before, grew it by 997 MB with lists of 99 MB.
 */
const RSS_BOUND = 192 * 1024 * 1024
/** A hang check, not a speed check: /health is expected within a second (it took 260 ms at most, the test's full GCs included). */
const HEALTH_BOUND_MS = 10_000

const userOf = (n: number): User => ({ name: `${PAD} ${n}`, age: n % 100, email: `${PAD}${n}@example.org`, registration_date: '2026-11-22' })

/** The JSON of the list in id order, as a reader checks it a piece at a time. */
function expectedJson () {
  const all = USERS + SAMPLE_USERS.length
  let index = 0
  let pending = '['
  /** Adds the next user's JSON to what is expected; false once there is none. */
  const more = (): boolean => {
    if (index === all) return false
    const user = index < SAMPLE_USERS.length ? SAMPLE_USERS[index] : userOf(index - SAMPLE_USERS.length + 1)
    pending += (index === 0 ? '' : ',') + JSON.stringify(user) + (index === all - 1 ? ']' : '')
    index++
    return true
  }
  /** Whether `text` is what comes next in the list. */
  return (text: string): boolean => {
    while (pending.length < text.length) if (!more()) break
    if (!pending.startsWith(text)) return false
    pending = pending.slice(text.length)
    return true
  }
}

/** Reads a list: all of it, or `limit` bytes slowly (a pause after each chunk), then goes away. */
function read (url: string, { slow = false, limit = Infinity, onBytes = (_bytes: number) => {} } = {}) {
  return new Promise<{ status: number, headers: http.IncomingHttpHeaders, bytes: number, matches: boolean, complete: boolean }>((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      const next = expectedJson()
      let bytes = 0
      let matches = true
      const done = (complete: boolean) => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, matches, complete })
      res.setEncoding('latin1')
      res.on('data', (chunk: string) => {
        bytes += chunk.length
        onBytes(chunk.length)
        if (matches && !url.includes('sortby')) matches = next(chunk)
        if (bytes >= limit) {
          res.destroy()
          done(false)
        } else if (slow) {
          res.pause()
          setTimeout(() => res.resume(), 1)
        }
      })
      res.on('end', () => done(true))
      res.on('error', () => {})
    }).on('error', reject)
  })
}

/** The milliseconds of a GET /health, or a failure past HEALTH_BOUND_MS. */
function health (base: string): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/health`, { agent: false, timeout: HEALTH_BOUND_MS }, (res) => {
      res.resume()
      res.on('end', () => res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`/health: ${res.statusCode}`)))
    })
    request.on('timeout', () => request.destroy(new Error(`/health took more than ${HEALTH_BOUND_MS} ms`)))
    request.on('error', reject)
  })
}

async function slowClients (t: Test, app: FastifyInstance) {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = baseUrl(app)

  // One full read first: the whole list, as it should be; and everything a list needs is made.
  const whole = await read(`${base}/users`)
  t.equal(whole.status, 200)
  t.equal(whole.headers['user-count'], String(USERS + 2), 'User-Count')
  t.equal(whole.headers['transfer-encoding'], 'chunked', 'streamed')
  t.ok(whole.complete && whole.matches, `the whole list, as expected (${(whole.bytes / 1e6).toFixed(0)} MB)`)

  gc()
  const baseline = process.memoryUsage.rss()
  let peak = 0
  let sampled = 0
  let next = SAMPLE_BYTES
  const onBytes = (bytes: number) => {
    sampled += bytes
    if (sampled < next) return
    next += SAMPLE_BYTES
    gc()
    peak = Math.max(peak, process.memoryUsage.rss() - baseline)
  }
  const reading = { done: false }
  const healthTimes: number[] = []
  const checks = (async () => {
    while (!reading.done) healthTimes.push(await health(base))
  })()
  const readers = await Promise.all(Array.from({ length: CLIENTS }, (_, n) =>
    read(`${base}/users${n % 4 === 3 ? '?sortby=name' : ''}`, { slow: true, limit: READ_BYTES, onBytes })))
  reading.done = true
  await checks

  for (const [n, reader] of readers.entries()) {
    t.equal(reader.status, 200, `client ${n}`)
    t.ok(reader.bytes >= READ_BYTES, `client ${n}: read ${(reader.bytes / 1e6).toFixed(1)} MB`)
    t.ok(reader.matches, `client ${n}: what it read is the list`)
  }
  t.ok(peak < RSS_BOUND, `RSS grew by ${(peak / 1e6).toFixed(1)} MB at most while ${CLIENTS} clients read ${CLIENTS} lists of ${(whole.bytes / 1e6).toFixed(0)} MB`)
  t.ok(healthTimes.length > 0, `/health answered ${healthTimes.length} times meanwhile, in ${Math.max(...healthTimes).toFixed(0)} ms at most`)
  const after = await app.inject({ url: '/users', headers: { range: 'id; order desc; limit 1' } })
  t.same(JSON.parse(after.body), [userOf(USERS)], 'the clients gone, the store answers on')
}

t.test('the memory store: several slow clients of a long list, in bounded memory, /health answered', async (t) => {
  let users: Repository<User> | undefined
  // No ceiling: more users than the default's.
  const app = await build(t, { COLLECTION_MAX_ITEMS: '0' }, {
    onRoute: function (this: FastifyInstance, route: RouteOptions) { if (route.url === '/users' && users === undefined) users = this.store.users }
  })
  for (let n = 1; n <= USERS; n++) await users!.create(userOf(n))
  await slowClients(t, app)
})

t.test('the PostgreSQL store: several slow clients of a long list, in bounded memory, /health answered', async (t) => {
  const url = await testDatabase()
  // Lists wait for a connection, and a sorted one for its sort, for as long as the machine takes.
  const app = await build(t, { DATABASE_URL: url, DATABASE_POOL_SIZE: '20', DATABASE_STATEMENT_TIMEOUT: '120000' })
  const client = new pg.Client(url)
  await client.connect()
  await client.query(`INSERT INTO users (item) SELECT ('{"name":"' || $2 || ' ' || g || '","age":' || (g % 100) ||
    ',"email":"' || $2 || g || '@example.org","registration_date":"2026-11-22"}')::json FROM generate_series(1, $1) g`, [USERS, PAD])
  await client.end()
  await slowClients(t, app)
})
