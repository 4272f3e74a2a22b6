import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { bodyLimitOf } from '../../../lib/body-limit.js'
import { METRICS_CONNECTION_LIMIT } from '../../../lib/connections.js'
import { memoryLimit } from '../../../lib/metrics/memory-limit.js'
import { REFUSAL_CAUSES } from '../../../lib/metrics/refusals.js'
import { packageInfo } from '../../../lib/package-info.js'
import { METRICS_LISTENER, READY_CHECK_TIMEOUT_MS } from '../../../plugins/edge/metrics.js'
import { UserSchema } from '../../../schemas/user.js'
import { assertError, build, json, logSink, testDatabase, until, type BuildOptions } from '../../helpers/index.js'
import { tcpProxy, testPostgres } from '../../helpers/postgres.js'

// The metrics (plugins/edge/metrics.ts) of the app as the tests build it, in-process. The production
// entry's metrics listener flooded under a descriptor limit, a process of its own:
// test/system/metrics.test.ts.

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL = '([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"'
// A value is a Go float: digits, or NaN / Inf in any case.
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL},?)*)\\})? (-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?|[Nn][Aa][Nn]|[+-]?[Ii][Nn][Ff])(?: -?\\d+)?$`)
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`)
const HELP = new RegExp(`^# HELP (${NAME}) .*$`)

/**
 * Parses the Prometheus text exposition format (version 0.0.4) strictly: every line is a HELP, a
 * TYPE or a sample of a declared family; throws on anything else.
 */
function parsePrometheus (text: string): Sample[] {
  const families = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || HELP.test(line)) continue
    const type = TYPE.exec(line)
    if (type !== null) {
      families.set(type[1] as string, type[2] as string)
      continue
    }
    const sample = SAMPLE.exec(line)
    if (sample === null) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`)
    const name = sample[1] as string
    const family = families.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, '')
    if (!families.has(family)) throw new Error(`a sample of an undeclared family: ${name}`)
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(new RegExp(LABEL, 'g'))].map((match) => [match[1], match[2]]))
    samples.push({ name, labels, value: Number(sample[5]) })
  }
  return samples
}

/** The value of the sample `name` that has these labels (and maybe others); undefined when there is none. */
const valueOf = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value

/** The refusals counted, by cause. */
const refusals = (samples: Sample[]) =>
  Object.fromEntries(REFUSAL_CAUSES.map((cause) => [cause, valueOf(samples, 'http_requests_refused_total', { cause })]))

/** No refusal of any cause. */
const NONE_REFUSED = { overload: 0, rate_limit: 0, failed_logins: 0, body_too_large: 0, collection_full: 0, stream_limit: 0, auth_table_full: 0 }

/** The hooks the metrics add to the API's routes. */
const HOOKS = [/measureRequest/, /countInFlight/, /countRefusal/]

const requestCount = (samples: Sample[], labels: Record<string, string>) =>
  samples.find((sample) => sample.name === 'http_request_duration_seconds_count' &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value

/**
 * The app, its log lines and the address of its metrics listener (METRICS_HOST:METRICS_PORT; any
 * free port in the tests), as its log says it: `address` is null when no listener was opened.
 */
async function buildWithMetrics (t: Test, env: Record<string, string> = {}, { onRoute }: Pick<BuildOptions, 'onRoute'> = {}) {
  const logs = logSink()
  const app = await build(t, env, { logger: logs.logger, onRoute })
  const listening = logs.entries.find((entry) => entry.msg === 'metrics listening')
  return { app, logs: logs.entries, address: (listening?.address ?? null) as AddressInfo | null }
}

/** A request to a metrics listener. */
async function scrape (address: AddressInfo | null, path = '/metrics', init: RequestInit = {}) {
  if (address === null) throw new Error('the metrics listener is not open')
  const res = await fetch(`http://127.0.0.1:${address.port}${path}`, init)
  return { status: res.status, headers: res.headers, body: await res.text() }
}

t.test('GET /metrics on its own port is Prometheus text with request counts and durations by route pattern, method and status', async (t) => {
  const { app, address } = await buildWithMetrics(t, { DOCS_CATCH_ALL: 'false' })
  await app.inject({ url: '/users/1' })
  await app.inject({ url: '/users/2' })
  await app.inject({ url: '/users/99' })
  await app.inject({ url: '/position/3/4' })
  await app.inject({ method: 'HEAD', url: '/hello' })
  await app.inject({ method: 'DELETE', url: '/hello' })
  await app.inject({ method: 'OPTIONS', url: '/users', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })

  const res = await scrape(address)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', 'the security headers of every answer')
  const samples = parsePrometheus(res.body)

  t.equal(requestCount(samples, { route: '/users/:userid', method: 'GET', status_code: '200' }), 2, 'two requests of one pattern: one series')
  t.equal(requestCount(samples, { route: '/users/:userid', method: 'GET', status_code: '404' }), 1, 'by status')
  t.equal(requestCount(samples, { route: '/position/:x/:y', method: 'GET', status_code: '200' }), 1)
  t.equal(requestCount(samples, { route: '/hello', method: 'HEAD', status_code: '200' }), 1, 'by method, HEAD included')
  t.equal(requestCount(samples, { route: 'unmatched', method: 'DELETE', status_code: '405' }), 1, 'a wrong method matched no route')
  t.equal(requestCount(samples, { route: '*', method: 'OPTIONS', status_code: '204' }), 1, 'a preflight, on the route of @fastify/cors')
  t.notMatch(res.body, /route="\/users\/1"|route="\/position\/3/, 'never a raw URL')
  const buckets = samples.filter((sample) => sample.name === 'http_request_duration_seconds_bucket' && sample.labels.route === '/users/:userid' && sample.labels.status_code === '200')
  t.ok(buckets.length > 5, 'a histogram of durations')
  t.same(buckets.at(-1), { name: 'http_request_duration_seconds_bucket', labels: { le: '+Inf', method: 'GET', route: '/users/:userid', status_code: '200' }, value: 2 })

  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.ok(samples.some((sample) => sample.name === name), `process metric ${name}`)
  }
  const head = await scrape(address, '/metrics', { method: 'HEAD' })
  t.same([head.status, head.body], [200, ''], 'HEAD: the headers alone')
})

t.test('the route label is bounded: any number of unknown URLs is one series', async (t) => {
  const { app, address } = await buildWithMetrics(t, { DOCS_CATCH_ALL: 'false' })
  for (let i = 0; i < 50; i++) await app.inject({ url: `/no-such-path/${i}?q=${i}` })
  for (let i = 0; i < 20; i++) await app.inject({ url: `/users/${i + 100}` })
  const samples = parsePrometheus((await scrape(address)).body)
  // build() itself asks for /openapi.json once, to check every answer against it.
  const series = samples.filter((sample) => sample.name === 'http_request_duration_seconds_count' && sample.labels.route !== '/openapi.json')
  t.same(series.map((sample) => sample.labels.route).sort(), ['/users/:userid', 'unmatched'])
  t.equal(requestCount(samples, { route: 'unmatched' }), 50)
  t.equal(requestCount(samples, { route: '/users/:userid' }), 20)
})

t.test('the API port has no /metrics, in any spelling; the description leaves it out', async (t) => {
  for (const catchAll of ['false', 'true']) {
    const app = await build(t, { DOCS_CATCH_ALL: catchAll })
    for (const url of ['/metrics', '/metrics/', '/metrics%2F', '/METRICS', '//metrics']) {
      const res = await app.inject({ url })
      t.notMatch(res.body, /http_request_duration_seconds/, `DOCS_CATCH_ALL=${catchAll}: ${url} is no metrics`)
      if (catchAll === 'false') assertError(t, res, 404)
    }
    t.notMatch((await app.inject({ url: '/docs' })).body, /\/metrics/, 'not on the description page')
    t.notOk('/metrics' in json((await app.inject({ url: '/openapi.json' }))).paths, 'not in the OpenAPI document')
  }
})

t.test('the metrics port serves GET /metrics and nothing else, with the JSON error body', async (t) => {
  const { address } = await buildWithMetrics(t)
  const other = await scrape(address, '/users')
  t.equal(other.status, 404)
  t.match(JSON.parse(other.body), { statusCode: 404, error: 'Not Found', message: /this port serves GET \/metrics/ })
  const post = await scrape(address, '/metrics', { method: 'POST' })
  t.equal(post.status, 405)
  t.equal(post.headers.get('allow'), 'GET, HEAD')
  t.match(JSON.parse(post.body), { statusCode: 405, error: 'Method Not Allowed' })
  const samples = parsePrometheus((await scrape(address)).body)
  t.notOk(samples.some((sample) => sample.labels.route === '/metrics'), 'scrapes are not API requests: no series for them')
})

t.test('the listener opens with the app and closes with it; METRICS_HOST and METRICS_PORT say where', async (t) => {
  const { app, address } = await buildWithMetrics(t, { METRICS_HOST: '127.0.0.1' })
  t.equal(address?.address, '127.0.0.1')
  t.ok((address?.port ?? 0) > 0, 'METRICS_PORT=0: a free port')
  t.equal((await scrape(address)).status, 200)
  await app.close()
  await t.rejects(fetch(`http://127.0.0.1:${address!.port}/metrics`), 'closed with the app: nothing listens there any more')

  // A port that is taken stops the start, naming it.
  const taken = await buildWithMetrics(t)
  await t.rejects(build(t, { METRICS_PORT: String(taken.address!.port) }), { code: 'EADDRINUSE' })
})

t.test('METRICS=false: no listener, and nothing is measured', async (t) => {
  const { app, address } = await buildWithMetrics(t, { METRICS: 'false', DOCS_CATCH_ALL: 'false' })
  t.equal(address, null)
  const hooks = app.printRoutes({ includeHooks: true })
  for (const hook of HOOKS) t.notMatch(hooks, hook, `no ${hook.source} hook on any route`)
  const on = (await build(t, { DOCS_CATCH_ALL: 'false' })).printRoutes({ includeHooks: true })
  for (const hook of HOOKS) t.match(on, hook, `the ${hook.source} hook the check looks for, when METRICS is on`)
})

/** The samples of a scrape of the metrics listener. */
const samplesOf = async (address: AddressInfo | null) => parsePrometheus((await scrape(address)).body)

t.test('the series of the service itself, from the start: nothing in flight, every cause of refusal at 0, what runs, ready, the memory limit', async (t) => {
  const previous = process.env.GIT_COMMIT
  process.env.GIT_COMMIT = '0123abc'
  t.teardown(() => { if (previous === undefined) delete process.env.GIT_COMMIT; else process.env.GIT_COMMIT = previous })
  const { address } = await buildWithMetrics(t)
  const samples = await samplesOf(address)
  t.equal(valueOf(samples, 'http_requests_in_flight'), 0, 'in flight: none; the scrape is not an API request')
  t.same(refusals(samples), NONE_REFUSED, 'every cause, at 0')
  t.same(samples.filter((sample) => sample.name === 'app_build_info'),
    [{ name: 'app_build_info', labels: { version: packageInfo.version, commit: '0123abc', node_version: process.version }, value: 1 }], 'what runs: the commit of GIT_COMMIT')
  t.equal(valueOf(samples, 'app_ready'), 1, 'ready')
  const limit = memoryLimit()
  t.equal(valueOf(samples, 'app_memory_limit_bytes'), limit, limit === undefined ? 'no memory limit here: no series' : 'the memory limit')
  t.notOk(samples.some((sample) => sample.name.startsWith('db_')), 'no pool without a database')
})

/** The app listening on a free port of the loopback; its port. */
async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as AddressInfo).port
}

t.test('http_requests_in_flight: a request held open is 1 until it is answered, or until its client goes away', async (t) => {
  const { app, address } = await buildWithMetrics(t)
  const port = await listening(app)
  const inFlight = async () => valueOf(await samplesOf(address), 'http_requests_in_flight')
  const body = JSON.stringify({ name: 'Ada', age: 36, email: 'ada@example.com', registration_date: '1815-12-10' })
  const head = `POST /users HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`

  // Headers and half the body: the request has arrived, its answer waits for the rest.
  const sender = net.connect(port, '127.0.0.1')
  t.teardown(() => sender.destroy())
  let received = ''
  sender.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
  sender.write(head + body.slice(0, 10))
  await until(async () => await inFlight() === 1)
  t.equal(await inFlight(), 1, 'held: 1')
  sender.write(body.slice(10))
  await until(() => received.startsWith('HTTP/1.1 204'))
  await until(async () => await inFlight() === 0)
  t.pass('answered: 0')

  const leaver = net.connect(port, '127.0.0.1')
  leaver.on('error', () => {})
  leaver.write(head + body.slice(0, 10))
  await until(async () => await inFlight() === 1)
  leaver.destroy()
  await until(async () => await inFlight() === 0)
  t.pass('its client gone before the answer: 0, not 1 for ever')
})

t.test('http_requests_refused_total: an overload 503 counts under overload alone; app_ready is 0 while overloaded', async (t) => {
  const { app, address } = await buildWithMetrics(t, { PRESSURE_MAX_HEAP_USED_BYTES: '1' })
  let overloaded = 0
  await until(async () => {
    const res = await app.inject({ url: '/hello' })
    if (res.statusCode === 503) overloaded++
    return res.statusCode === 503
  })
  assertError(t, await app.inject({ url: '/no-such-path' }), 503, 'overloaded')
  assertError(t, await app.inject({ url: '/ready' }), 503, 'Not ready: the service is overloaded')
  const samples = await samplesOf(address)
  t.same(refusals(samples), { ...NONE_REFUSED, overload: overloaded + 1 }, 'each 503 of overload, a route\'s or not; not /ready\'s own answer')
  t.equal(valueOf(samples, 'app_ready'), 0, 'not ready')
})

t.test('http_requests_refused_total: a rate-limit 429 counts under rate_limit alone', async (t) => {
  const { app, address } = await buildWithMetrics(t, { RATE_LIMIT_MAX: '1' })
  t.equal((await app.inject({ url: '/hello' })).statusCode, 200)
  assertError(t, await app.inject({ url: '/hello' }), 429)
  t.same(refusals(await samplesOf(address)), { ...NONE_REFUSED, rate_limit: 1 })
})

t.test('http_requests_refused_total: a failed-login 429 counts under failed_logins alone; the 401s before it do not count', async (t) => {
  const { app, address } = await buildWithMetrics(t, { BASIC_AUTH_USERS: 'servant:server', AUTH_FAILURE_LIMIT: '2' })
  const login = () => app.inject({ url: '/users/list-all', headers: { authorization: `Basic ${Buffer.from('servant:guess').toString('base64')}` } })
  for (let i = 0; i < 2; i++) assertError(t, await login(), 401)
  assertError(t, await login(), 429, 'Too many failed authentications')
  t.same(refusals(await samplesOf(address)), { ...NONE_REFUSED, failed_logins: 1 })
})

t.test('http_requests_refused_total: a 413 counts under body_too_large alone; other client errors do not count', async (t) => {
  const { app, address } = await buildWithMetrics(t)
  const json = { 'content-type': 'application/json' }
  assertError(t, await app.inject({ method: 'POST', url: '/users', headers: json, payload: ' '.repeat(bodyLimitOf(UserSchema) + 1) }), 413)
  assertError(t, await app.inject({ method: 'POST', url: '/users', headers: json, payload: '{}' }), 400)
  assertError(t, await app.inject({ url: '/users/99' }), 404)
  t.same(refusals(await samplesOf(address)), { ...NONE_REFUSED, body_too_large: 1 })
})

t.test('http_requests_refused_total: a POST to a full collection counts under collection_full alone', async (t) => {
  const { app, address } = await buildWithMetrics(t, { COLLECTION_MAX_ITEMS: '3' })
  const post = () => app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada', age: 36, email: 'ada@example.org', registration_date: '1843-07-01' } })
  t.equal((await post()).statusCode, 204, 'the third user, after the two samples')
  assertError(t, await post(), 409, 'The collection is full')
  t.same(refusals(await samplesOf(address)), { ...NONE_REFUSED, collection_full: 1 })
})

t.test('app_ready is 0 from the moment the app starts closing, while it drains', async (t) => {
  const { app, address } = await buildWithMetrics(t, { SHUTDOWN_DRAIN: '8000' })
  const port = await listening(app)
  // A keep-alive connection keeps the drain going: the metrics listener answers meanwhile.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const get = (url: string) => new Promise<number>((resolve, reject) => {
    http.get(`http://127.0.0.1:${port}${url}`, { agent }, (res) => { res.resume().on('end', () => resolve(res.statusCode!)) }).on('error', reject)
  })
  t.equal(await get('/ready'), 200)
  t.equal(valueOf(await samplesOf(address), 'app_ready'), 1, 'ready')
  const started = Date.now()
  const closed = app.close()
  await until(async () => valueOf(await samplesOf(address), 'app_ready') === 0)
  t.ok(Date.now() - started < 8000, 'closing: not ready, during the drain')
  t.equal(await get('/ready'), 503, 'as /ready answers, on a connection still open')
  agent.destroy()
  await closed
})

t.test('with the PostgreSQL store: the pool\'s gauges, its acquisitions and the queries move; app_ready is 0 while the database is unreachable', async (t) => {
  const postgres = await testPostgres()
  const proxy = await tcpProxy(t, postgres.port)
  const url = (await postgres.createDatabase()).replace(`:${postgres.port}/`, `:${proxy.port}/`)
  // The app's own pool, as its routes see it.
  let pool: pg.Pool | undefined
  const { app, address } = await buildWithMetrics(t, { DATABASE_URL: url, DATABASE_POOL_SIZE: '4', DATABASE_STATEMENT_TIMEOUT: '3000' }, {
    onRoute (this: FastifyInstance) { pool ??= this.hasDecorator('pg') ? this.pg.pool : undefined }
  })
  const count = (samples: Sample[], name: string) => valueOf(samples, `${name}_count`) as number

  const before = await samplesOf(address)
  t.equal(valueOf(before, 'db_pool_max_connections'), 4, 'the pool\'s size: DATABASE_POOL_SIZE')
  t.equal(valueOf(before, 'app_ready'), 1, 'ready')
  t.equal(valueOf(before, 'db_pool_waiting_requests'), 0)
  t.equal((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada', age: 36, email: 'ada@example.com', registration_date: '1815-12-10' } })).statusCode, 204)
  t.equal((await app.inject({ url: '/users/1' })).statusCode, 200)
  const after = await samplesOf(address)
  // Each scrape checks readiness with a query of its own: one acquisition and one query more.
  t.ok(count(after, 'db_pool_acquire_duration_seconds') >= count(before, 'db_pool_acquire_duration_seconds') + 3, 'acquisitions: the requests\' and the scrape\'s')
  t.ok(count(after, 'db_query_duration_seconds') >= count(before, 'db_query_duration_seconds') + 3, 'queries: the requests\' and the scrape\'s')

  const held = [await pool!.connect(), await pool!.connect()]
  let samples = await samplesOf(address)
  t.equal(valueOf(samples, 'db_pool_connections', { state: 'used' }), 2, 'two connections held: used')
  const idle = valueOf(samples, 'db_pool_connections', { state: 'idle' })!
  t.ok(idle >= 0 && idle <= 2, 'the rest idle')
  held.push(await pool!.connect(), await pool!.connect())
  const waiting = pool!.connect()
  samples = await samplesOf(address)
  t.equal(valueOf(samples, 'db_pool_waiting_requests'), 2, 'the pool full: a request waiting, and the scrape\'s readiness check')
  t.equal(valueOf(samples, 'app_ready'), 0, 'its readiness check got no connection within the probe\'s timeout: not ready')
  for (const client of held) client.release()
  ;(await waiting).release()

  await proxy.stopped()
  samples = await samplesOf(address)
  t.equal(valueOf(samples, 'app_ready'), 0, 'the database gone: not ready')
  assertError(t, await app.inject({ url: '/ready' }), 503, 'The database is unavailable')
  proxy.blackhole()
  const started = Date.now()
  samples = await samplesOf(address)
  t.equal(valueOf(samples, 'app_ready'), 0, 'the database silent: not ready')
  t.ok(Date.now() - started < READY_CHECK_TIMEOUT_MS + 1000, `the scrape answers after the readiness check's own timeout (${Date.now() - started} ms)`)
  proxy.restore()
  await until(async () => valueOf(await samplesOf(address), 'app_ready') === 1)
  t.pass('ready again with the database')
})

t.test('METRICS=false with the PostgreSQL store: the pool is pg\'s own, not wrapped', async (t) => {
  let pool: pg.Pool | undefined
  await build(t, { METRICS: 'false', DATABASE_URL: await testDatabase() }, {
    onRoute (this: FastifyInstance) { pool ??= this.hasDecorator('pg') ? this.pg.pool : undefined }
  })
  t.equal(pool!.connect, pg.Pool.prototype.connect, 'connect is the pool\'s own')
  const client = await pool!.connect()
  t.teardown(() => client.release())
  t.equal(client.query, pg.Client.prototype.query, 'and so is a connection\'s query')
})

/** A connection to a metrics listener that sends `request` (if any) and keeps what it receives; `closed` once the server closes it. */
function connection (address: AddressInfo | null, request = '') {
  if (address === null) throw new Error('the metrics listener is not open')
  const opened = Date.now()
  const socket = net.connect(address.port, '127.0.0.1', () => { if (request !== '') socket.write(request) })
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { received += chunk })
  socket.on('error', () => {})
  const closed = new Promise<{ received: string, ms: number }>((resolve) => {
    socket.on('close', () => resolve({ received, ms: Date.now() - opened }))
  })
  return { socket, closed, received: () => received }
}

const SCRAPE = 'GET /metrics HTTP/1.1\r\nHost: scraper\r\n\r\n'

t.test(`the metrics port keeps ${METRICS_CONNECTION_LIMIT} connections at once: past them a connection is closed at once, and the refusals are logged`, async (t) => {
  const { logs, address } = await buildWithMetrics(t)
  // Every scraper keeps its connection open after its answer (keep-alive), so none frees a place.
  const scrapers = Array.from({ length: METRICS_CONNECTION_LIMIT + 4 }, () => connection(address, SCRAPE))
  t.teardown(() => { for (const { socket } of scrapers) socket.destroy() })
  const answered = () => scrapers.filter(({ received }) => received().startsWith('HTTP/1.1 200 OK')).length
  const refused = () => scrapers.filter(({ socket, received }) => socket.closed && received() === '').length
  await until(() => answered() + refused() === scrapers.length, 60_000)
  t.equal(answered(), METRICS_CONNECTION_LIMIT, 'as many answered as the cap')
  t.equal(refused(), 4, 'the others closed without an answer')
  t.match(logs.filter((entry) => entry.msg === 'metrics connection refused: the metrics listener has as many as it may keep'),
    [{ level: 40, limit: METRICS_CONNECTION_LIMIT, dropped: 1 }], 'one line for the first refusal; the next ones are counted for the next line')
})

t.test('the metrics port closes a connection that sends no request, or half of one, past its headers timeout, with the JSON 408', async (t) => {
  const { address } = await buildWithMetrics(t)
  const silent = connection(address)
  const half = connection(address, 'GET /metrics HTTP/1.1\r\nHost: scr')
  const scraper = connection(address, SCRAPE)
  t.teardown(() => { for (const { socket } of [silent, half, scraper]) socket.destroy() })
  for (const [name, { closed }] of [['sends nothing', silent], ['sends half the headers', half]] as const) {
    const { received, ms } = await closed
    t.ok(ms >= METRICS_LISTENER.headersTimeout, `${name}: closed past the headers timeout (${ms} ms)`)
    const [head = '', body = ''] = received.split('\r\n\r\n')
    t.match(head, /^HTTP\/1\.1 408 Request Timeout\r\n/, `${name}: 408`)
    t.match(head, /\r\nx-content-type-options: nosniff\r\n/i, `${name}: the security headers of every answer`)
    t.match(JSON.parse(body), { statusCode: 408, error: 'Request Timeout', code: 'ERR_HTTP_REQUEST_TIMEOUT' }, `${name}: the JSON error body`)
  }
  const { received, ms } = await scraper.closed
  t.match(received, /^HTTP\/1\.1 200 OK\r\n/, 'a scraper is answered')
  t.ok(ms >= METRICS_LISTENER.keepAliveTimeout, `and its idle connection closed past the keep-alive timeout (${ms} ms)`)
  t.equal(received.match(/HTTP\/1\.1 /g)?.length, 1, 'without another answer')
})
