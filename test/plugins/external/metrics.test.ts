import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { assertError, build, json, logSink } from '../../helpers/index.js'

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
 * The app and the address of its metrics listener (METRICS_HOST:METRICS_PORT; any free port in the
 * tests), as its log says it: `address` is null when no listener was opened.
 */
async function buildWithMetrics (t: Test, env: Record<string, string> = {}) {
  const logs = logSink()
  const app = await build(t, env, { logger: logs.logger })
  const listening = logs.entries.find((entry) => entry.msg === 'metrics listening')
  return { app, address: (listening?.address ?? null) as AddressInfo | null }
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
