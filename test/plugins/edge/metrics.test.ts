import fs from 'node:fs'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import path from 'node:path'
import t, { type Test } from 'tap'
import { METRICS_CONNECTION_LIMIT, RESERVED_DESCRIPTORS } from '../../../lib/connections.js'
import { METRICS_LISTENER } from '../../../plugins/edge/metrics.js'
import { assertError, build, json, logSink, startServer, until } from '../../helpers/index.js'

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

const requestCount = (samples: Sample[], labels: Record<string, string>) =>
  samples.find((sample) => sample.name === 'http_request_duration_seconds_count' &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value

/**
 * The app, its log lines and the address of its metrics listener (METRICS_HOST:METRICS_PORT; any
 * free port in the tests), as its log says it: `address` is null when no listener was opened.
 */
async function buildWithMetrics (t: Test, env: Record<string, string> = {}) {
  const logs = logSink()
  const app = await build(t, env, { logger: logs.logger })
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
  t.notMatch(app.printRoutes({ includeHooks: true }), /measureRequest/, 'no hook on any route')
  const on = await build(t, { DOCS_CATCH_ALL: 'false' })
  t.match(on.printRoutes({ includeHooks: true }), /measureRequest/, 'the hook the check looks for, when METRICS is on')
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

/** The POSIX shell's ulimit, then Node: a descriptor limit of 1024 (soft and hard) for the service. */
const LIMITED = ['/bin/sh', '-c', 'ulimit -n 1024 && exec "$@"', 'sh']

t.test('1,100 idle connections to the metrics port of the production entry, under 1,024 descriptors: the API answers throughout, the metrics port keeps a handful and closes them past its timeout', async (t) => {
  const server = await startServer(t, { NODE_ENV: 'production', STORE: 'memory' }, { prefix: LIMITED })
  const metricsPort = ((await server.waitForLog((entry) => entry.msg === 'metrics listening')).address as AddressInfo).port
  const fdDirectory = `/proc/${server.child.pid}/fd`
  const descriptors = () => fs.readdirSync(fdDirectory)
  /** The server's sockets: its two listeners and the connections it has. */
  const sockets = () => descriptors().filter((fd) => {
    try {
      return fs.readlinkSync(path.join(fdDirectory, fd)).startsWith('socket:')
    } catch {
      return false // closed meanwhile
    }
  }).length
  const listeners = sockets()
  /** A GET on a new connection (none kept from before the flood): its status, or the error's code. */
  const get = (url: string) => new Promise<number | string>((resolve) => {
    http.get(`${server.url}${url}`, { agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
    }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
  const api = async () => [await get('/health'), await get('/ready'), await get('/users')]
  t.same(await api(), [200, 200, 200], 'the API answers before')
  await until(() => sockets() === listeners, 60_000)

  const flood: net.Socket[] = []
  t.teardown(() => { for (const socket of flood) socket.destroy() })
  for (let i = 0; i < 1100; i++) {
    const socket = net.connect(metricsPort, '127.0.0.1')
    socket.on('error', () => {})
    // Read, so that the server's close is seen; nothing is ever sent.
    socket.resume()
    flood.push(socket)
  }
  const closed = () => flood.filter((socket) => socket.closed).length
  // Every connection of the flood taken in: closed by the server, or held by it.
  await until(() => closed() + sockets() - listeners >= flood.length, 60_000)
  const held = sockets() - listeners
  const during = descriptors().length
  t.ok(held <= METRICS_CONNECTION_LIMIT, `the metrics port holds ${held} connections, ${METRICS_CONNECTION_LIMIT} at most; the others are closed`)
  t.ok(during <= RESERVED_DESCRIPTORS, `${during} descriptors open during the flood: within the ${RESERVED_DESCRIPTORS} the API's cap leaves`)
  t.same(await api(), [200, 200, 200], 'the API answers during the flood: /health, /ready, /users')
  const isRefusal = (entry: Record<string, unknown>) => entry.msg === 'metrics connection refused: the metrics listener has as many as it may keep'
  await until(() => server.logs.some(isRefusal), 60_000)
  t.match(server.logs.find(isRefusal), { level: 40, limit: METRICS_CONNECTION_LIMIT }, 'the refusals are logged')

  await until(() => closed() === flood.length, 60_000)
  await until(() => sockets() === listeners, 60_000)
  t.pass('the connections it held are closed by the server, past its timeouts')
  t.same(await api(), [200, 200, 200], 'the API answers after')
  t.equal(server.child.exitCode, null, 'the process lives')
})
