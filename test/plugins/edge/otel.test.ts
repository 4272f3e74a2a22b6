import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { activeTracing, FLUSH_LIMIT_MS, REQUEST_ID_ATTRIBUTE, startTracing } from '../../../lib/tracing.js'
import { CLIENT, otlpReceiver, SERVER, type ReceivedSpan } from './otlp-receiver.js'

// Tracing end to end: the spans the service exports, received by an OTLP/HTTP endpoint of this
// test's own, in this process (the app as the tests build it) and from the production entry
// (dist/bundle/server.js) and `fastify start` (dist/cli.js).

/** The spans under `root` as an indented tree: a line per span, its kind and the attributes worth reading. */
function tree (spans: readonly ReceivedSpan[], root: ReceivedSpan, depth = 0): string[] {
  const shown = ['http.route', 'http.request.method', 'http.response.status_code', REQUEST_ID_ATTRIBUTE, 'db.system.name', 'db.namespace', 'db.operation.name', 'db.query.text']
  const fields = shown.filter((key) => key in root.attributes).map((key) => `${key}=${JSON.stringify(root.attributes[key])}`)
  const kind = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'][root.kind]
  const line = `${'  '.repeat(depth)}${root.name} (${kind}) ${fields.join(' ')}`.trimEnd()
  const children = spans.filter((span) => span.parentSpanId === root.spanId)
  return [line, ...children.flatMap((child) => tree(spans, child, depth + 1))]
}

// Before anything loads pg (the helpers do): the collector, the settings, then tracing, as the
// entry points start it. The batches wait for a flush (a delay of an hour), so that each test
// knows when its spans are sent; the settings it does not follow are said at the first app.
const collector = await otlpReceiver(t)
Object.assign(process.env, {
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  OTEL_BSP_SCHEDULE_DELAY: '3600000',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  OTEL_TRACES_EXPORTER: 'otlp,console'
})
const tracing = startTracing()!
const { build, buildPlugins, logSink, startServer, testDatabase, until } = await import('../../helpers/index.js')
const { projectRoot } = await import('../../../lib/project-root.js')
const { packageInfo } = await import('../../../lib/package-info.js')

const USER = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const CALLER_SPAN_ID = 'b7ad6b7169203331'

/** The log lines of one request, by its id. */
const linesOf = (entries: Array<Record<string, unknown>>, reqId: string) => entries.filter((entry) => entry.reqId === reqId)

t.test('started: the endpoint logged, and the settings it does not follow said once', async (t) => {
  t.equal(activeTracing(), tracing)
  t.equal(startTracing(), tracing, 'once per process')
  const sink = logSink('info')
  await build(t, {}, { logger: sink.logger })
  t.match(sink.entries.find((entry) => entry.msg === 'tracing: spans exported over OTLP/HTTP (JSON)'), { level: 30, endpoint: collector.url })
  t.same(sink.entries.filter((entry) => entry.level === 40).map((entry) => entry.msg), [
    'OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: traces are sent as http/json (OTLP/HTTP, JSON), which every OTLP/HTTP collector takes',
    'OTEL_TRACES_EXPORTER=otlp,console: traces are exported over OTLP only'
  ])
})

t.test('POST /users on PostgreSQL: the request span and the queries under it; the log lines carry its trace', async (t) => {
  const sink = logSink('info')
  const databaseUrl = await testDatabase()
  const app = await build(t, { DATABASE_URL: databaseUrl }, { logger: sink.logger })
  await tracing.flush()
  t.same(collector.spans.filter((span) => span.scope !== '@fastify/otel'), [], 'the migrations and the pool\'s checks at start make no trace: they have no request')

  const res = await app.inject({ method: 'POST', url: '/users', headers: { 'x-request-id': 'otel-post-1' }, payload: USER })
  t.equal(res.statusCode, 204)
  await tracing.flush()
  const request = collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-post-1')!
  t.ok(request, 'the request span, found by the request id')
  const spans = collector.trace(request.traceId)
  t.comment(['the trace of POST /users:', ...tree(spans, request)].join('\n'))

  t.has(request, {
    name: 'POST /users',
    kind: SERVER,
    parentSpanId: undefined,
    scope: '@fastify/otel',
    attributes: { 'http.route': '/users', 'http.request.method': 'POST', 'http.response.status_code': 204, 'url.path': '/users', [REQUEST_ID_ATTRIBUTE]: 'otel-post-1' },
    resource: { 'service.name': 'servant-example-api', 'service.version': packageInfo.version }
  })
  t.notOk(request.status.code, 'status unset: no error')
  const queries = spans.filter((span) => span !== request)
  t.same(new Set(queries.map((span) => span.scope)), new Set(['@opentelemetry/instrumentation-pg']), 'the others are PostgreSQL\'s: no span per hook or for the handler')
  const database = new URL(databaseUrl).pathname.slice(1)
  for (const query of queries) {
    t.equal(query.kind, CLIENT, `${query.name}: a client span`)
    t.ok(query.parentSpanId === request.spanId || queries.some((other) => other.spanId === query.parentSpanId), `${query.name}: under the request span`)
    t.match(query.attributes, { 'db.system.name': 'postgresql', 'db.namespace': database }, `${query.name}: the database`)
  }
  t.match(queries.find((query) => query.name === 'pg-pool.connect'), { parentSpanId: request.spanId }, 'the pool\'s connect: pg-pool was patched as it loaded, so the hook came first')
  t.match(queries.find((query) => String(query.attributes['db.query.text']).startsWith('INSERT INTO users')), { name: /^pg\.query:/, parentSpanId: request.spanId }, 'the INSERT')

  const lines = linesOf(sink.entries, 'otel-post-1')
  t.same(lines.map((entry) => entry.msg), ['incoming request', 'request completed'])
  for (const line of lines) {
    t.match(line, { trace_id: request.traceId, span_id: request.spanId, trace_flags: '01' }, `"${line.msg}": the trace, the request span`)
  }
})

t.test('a traceparent received is continued: the caller\'s span is the request span\'s parent', async (t) => {
  const sink = logSink('info')
  const app = await build(t, {}, { logger: sink.logger })
  const res = await app.inject({ url: '/hello?name=trace', headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`, 'x-request-id': 'otel-continued' } })
  t.equal(res.statusCode, 200)
  await tracing.flush()
  const [request] = collector.trace(TRACE_ID).filter((span) => span.kind === SERVER)
  t.has(request, { name: 'GET /hello', parentSpanId: CALLER_SPAN_ID, attributes: { 'url.path': '/hello', [REQUEST_ID_ATTRIBUTE]: 'otel-continued' } }, 'the same trace, under the caller\'s span; no query string in url.path')
  t.match(linesOf(sink.entries, 'otel-continued'), [{ trace_id: TRACE_ID, span_id: request!.spanId }, { trace_id: TRACE_ID, span_id: request!.spanId }])

  // A caller that does not sample: nothing recorded (parent-based sampling), the log lines still join its trace.
  const before = collector.spans.length
  await app.inject({ url: '/hello', headers: { traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN_ID}-00`, 'x-request-id': 'otel-unsampled' } })
  await tracing.flush()
  t.equal(collector.spans.length, before, 'nothing exported')
  t.match(linesOf(sink.entries, 'otel-unsampled'), [{ trace_id: '1'.repeat(32), trace_flags: '00' }, { trace_id: '1'.repeat(32), trace_flags: '00' }])
})

t.test('a request that fails or is refused: its span says so, with the status', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ url: '/users/abc', headers: { 'x-request-id': 'otel-400' } })
  t.equal(res.statusCode, 400)
  const missing = await app.inject({ url: '/no/such/path', headers: { 'x-request-id': 'otel-404' } })
  t.equal(missing.statusCode, 404)
  await tracing.flush()
  t.has(collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-400'), { name: 'GET /users/:userid', attributes: { 'http.response.status_code': 400, 'http.route': '/users/:userid' } })
  t.has(collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-404'), { name: 'GET', attributes: { 'http.response.status_code': 404 } }, 'no route: the method alone')

  // The rate limit's hook is the route's own, after the request span's.
  const limited = await build(t, { RATE_LIMIT_MAX: '1' })
  await limited.inject({ url: '/hello' })
  t.equal((await limited.inject({ url: '/hello', headers: { 'x-request-id': 'otel-429' } })).statusCode, 429)
  await tracing.flush()
  t.has(collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-429'), { name: 'GET /hello', attributes: { 'http.response.status_code': 429 } }, 'a refusal of the rate limit has its span')
})

t.test('a query string reaches no span: url.path is the path alone, whatever the answer; no attribute, event or status holds a credential', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.get('/echo', async () => 'ok')
    server.get('/items/:id', { schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } } }, async () => 'ok')
    server.get('/fails', async () => { throw new Error('broken') })
  }, { DOCS_CATCH_ALL: 'false' })
  const requests: Array<[string, number, string]> = [
    ['/echo?token=s3cret', 200, 'GET /echo'],
    ['/echo?a=1&TOKEN=s3cret&%74oken=s3cret', 200, 'GET /echo'],
    ['/items/abc?password=s3cret', 400, 'GET /items/:id'],
    ['/nowhere?access_token=s3cret', 404, 'GET'],
    ['/fails?api_key=s3cret', 500, 'GET /fails']
  ]
  for (const [index, [url, status]] of requests.entries()) {
    t.equal((await app.inject({ url, headers: { 'x-request-id': `otel-query-${index}` } })).statusCode, status, url)
  }
  await tracing.flush()
  const spanOf = (index: number) => collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === `otel-query-${index}`)!
  for (const [index, [url, status, name]] of requests.entries()) {
    const span = spanOf(index)
    t.has(span, { name, attributes: { 'url.path': url.split('?')[0], 'http.response.status_code': status } }, `${url}: the path alone`)
    t.same(Object.keys(span.attributes).filter((key) => key.startsWith('url.') || key.startsWith('http.target')), ['url.path'], `${url}: no url.query, url.full or http.target`)
    t.notMatch(span.text, /s3cret/, `${url}: nowhere in the span`)
  }
  t.match(spanOf(4).text, /"exception"/, 'the 5xx span holds its exception: its events were searched too')
})

t.test('a collector that refuses or hangs: requests are answered, a flush says so and waits no longer than its limit', async (t) => {
  const sink = logSink('warn')
  const app = await build(t, {}, { logger: sink.logger })
  t.teardown(() => { collector.mode = 'ok' })

  collector.mode = 'fail'
  t.equal((await app.inject({ url: '/hello' })).statusCode, 200)
  await tracing.flush()
  t.match(sink.entries.find((entry) => entry.msg === 'tracing: spans could not be flushed'), { level: 40, err: { message: /Bad Request/ } }, 'refused: a warning')

  collector.mode = 'hang'
  const requests = collector.received.requests
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/hello' })).statusCode, 200, 'answered while the export hangs')
  await tracing.flush(100)
  t.ok(collector.received.requests > requests && collector.held.length > 0, 'the export reached the collector, which holds it')
  t.match(sink.entries.find((entry) => entry.msg === 'tracing: the collector took too long, spans not flushed'), { level: 40, limitMs: 100 })
  t.equal((await app.inject({ url: '/hello' })).statusCode, 200, 'and still answered')
  collector.release()
})

t.test('the SDK\'s warnings and export failures reach the log as warnings', async (t) => {
  const sink = logSink('warn')
  await build(t, {}, { logger: sink.logger })
  const { diag } = await import('@opentelemetry/api')
  const { globalErrorHandler } = await import('@opentelemetry/core')
  diag.warn('Dropped 3 spans because maxQueueSize reached', new Error('queue full'))
  globalErrorHandler(new Error('connect ECONNREFUSED'))
  t.match(sink.entries, [{ level: 40, msg: 'tracing: Dropped 3 spans because maxQueueSize reached', err: { message: 'queue full' } }])
  t.equal(sink.entries.length, 1, 'the second within the minute is left out (counted in the next)')
})

t.test('the close flushes the spans ended before it', async (t) => {
  const app = await build(t)
  await app.inject({ url: '/hello', headers: { 'x-request-id': 'otel-before-close' } })
  t.notOk(collector.spans.some((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-before-close'), 'not sent yet')
  await app.close()
  t.ok(collector.spans.some((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === 'otel-before-close'), 'sent by the close')
})

/** The first span of `spans` that answered the request of this id. */
const requestSpan = (spans: readonly ReceivedSpan[], reqId: string) => spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === reqId)

/** Checks a POST /users trace from another process: the request span, the pool's connect and the INSERT under it. */
function assertUsersTrace (t: Test, spans: readonly ReceivedSpan[], reqId: string): ReceivedSpan {
  const request = requestSpan(spans, reqId)!
  t.has(request, { name: 'POST /users', kind: SERVER, attributes: { 'http.route': '/users', 'http.response.status_code': 204 } }, 'the request span')
  const queries = spans.filter((span) => span.parentSpanId === request.spanId && span.scope === '@opentelemetry/instrumentation-pg')
  t.ok(queries.some((query) => query.name === 'pg-pool.connect'), 'the pool\'s connect: the hook was in place before pg and pg-pool loaded')
  t.ok(queries.some((query) => String(query.attributes['db.query.text']).startsWith('INSERT INTO users')), 'the INSERT')
  return request
}

/** The service's answer to POST /users at `url`, with these headers. */
const postUser = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(USER) })

/** Settings of the spawned services: nothing sent before the close unless a test says otherwise. */
const BATCH_AT_CLOSE = { OTEL_BSP_SCHEDULE_DELAY: '3600000' }

t.test('the production entry (dist/bundle/server.js): POST /users on PostgreSQL traced, the caller\'s trace continued, the spans flushed at SIGTERM', async (t) => {
  const receiver = await otlpReceiver(t)
  const server = await startServer(t, {
    ...BATCH_AT_CLOSE,
    // Used as it is, where OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces added.
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    OTEL_SERVICE_NAME: 'servant-bundle',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    DATABASE_URL: await testDatabase()
  })
  const res = await postUser(server.url, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`, 'x-request-id': 'bundle-post' })
  t.equal(res.status, 204)
  t.equal(receiver.received.requests, 0, 'batched: nothing sent yet')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'SIGTERM: exit 0')

  t.same([...receiver.received.paths], ['/v1/traces'])
  t.same([...receiver.received.contentTypes], ['application/json'], 'OTLP/HTTP, JSON')
  const spans = receiver.trace(TRACE_ID)
  const request = assertUsersTrace(t, spans, 'bundle-post')
  t.comment(['the trace of POST /users, from the production entry:', ...tree(spans, request)].join('\n'))
  t.equal(request.parentSpanId, CALLER_SPAN_ID, 'under the caller\'s span')
  t.match(request.resource, { 'service.name': 'servant-bundle', 'deployment.environment.name': 'test', 'host.name': String })
  const lines = linesOf(server.logs, 'bundle-post')
  t.same(lines.map((entry) => entry.msg), ['incoming request', 'request completed'])
  for (const line of lines) t.match(line, { trace_id: TRACE_ID, span_id: request.spanId }, `"${line.msg}" carries the trace`)
  t.match(server.logs.find((entry) => String(entry.msg).startsWith('tracing:')), { level: 30, msg: 'tracing: spans exported over OTLP/HTTP (JSON)' })
})

t.test('the production entry, tracing off (OTEL_SDK_DISABLED, the endpoint set): nothing sent, no trace ids, no tracing', async (t) => {
  const receiver = await otlpReceiver(t)
  const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' })
  t.equal((await fetch(`${server.url}/hello`, { headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`, 'x-request-id': 'bundle-off' } })).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.equal(receiver.received.requests, 0, 'nothing exported')
  t.same(linesOf(server.logs, 'bundle-off').map((entry) => entry.msg), ['incoming request', 'request completed'])
  t.notOk(server.logs.some((entry) => 'trace_id' in entry || String(entry.msg).startsWith('tracing')), 'no trace ids, no tracing line')
})

t.test('the production entry follows OTEL_TRACES_SAMPLER: always_off records nothing; the log lines have the trace ids, unsampled', async (t) => {
  const receiver = await otlpReceiver(t)
  const server = await startServer(t, { ...BATCH_AT_CLOSE, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_off' })
  t.equal((await fetch(`${server.url}/hello`, { headers: { 'x-request-id': 'bundle-unsampled' } })).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.equal(receiver.received.requests, 0, 'nothing exported')
  t.match(linesOf(server.logs, 'bundle-unsampled'), [{ trace_id: /^[0-9a-f]{32}$/, trace_flags: '00' }, { trace_flags: '00' }])
})

t.test('the production entry, a collector that refuses every export: requests answered, one warning a minute, exit 0', async (t) => {
  const receiver = await otlpReceiver(t)
  receiver.mode = 'fail'
  const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '1' })
  for (let i = 1; i <= 3; i++) {
    t.equal((await fetch(`${server.url}/hello`)).status, 200, 'answered')
    await until(() => receiver.received.requests >= i)
  }
  await until(() => server.logs.some((entry) => entry.msg === 'tracing: spans could not be exported (dropped once the queue is full)'), 30_000)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.match(server.logs.filter((entry) => entry.level === 40 && String(entry.msg).startsWith('tracing:')), [{ err: { message: /Bad Request/ } }], 'one warning for three failed exports')
})

t.test('the production entry, a collector that never answers: requests answered, SIGTERM waits FLUSH_LIMIT_MS for it, no longer', async (t) => {
  const receiver = await otlpReceiver(t)
  receiver.mode = 'hang'
  // Without the flush's limit, the close would wait for the batch's export timeout (30 s), and the
  // grace would end it first (exit 1).
  const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '1', OTEL_EXPORTER_OTLP_TIMEOUT: '600000', SHUTDOWN_GRACE: String(10 * FLUSH_LIMIT_MS) })
  t.equal((await fetch(`${server.url}/hello`)).status, 200)
  await until(() => receiver.held.length > 0)
  for (let i = 0; i < 5; i++) t.equal((await fetch(`${server.url}/hello`)).status, 200, 'answered while an export hangs')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'exit 0, within the grace')
  t.match(server.logs.filter((entry) => entry.level === 40 && String(entry.msg).startsWith('tracing:')), [{ msg: 'tracing: the collector took too long, spans not flushed', limitMs: FLUSH_LIMIT_MS }])
})

t.test('fastify start (dist/cli.js): tracing starts before the app loads pg; the close flushes', async (t) => {
  const receiver = await otlpReceiver(t)
  const fastifyCli = path.join(projectRoot, 'node_modules', 'fastify-cli', 'cli.js')
  const cliEntry = path.join(projectRoot, 'dist', 'cli.js')
  const child = spawn(process.execPath, [fastifyCli, 'start', '--config', cliEntry, cliEntry], {
    cwd: t.testdir(),
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', METRICS_PORT: '0', DATABASE_URL: await testDatabase(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...BATCH_AT_CLOSE },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const logs: Array<Record<string, unknown>> = []
  const url = await new Promise<string>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>
      logs.push(entry)
      const listening = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(String(entry.msg))?.[1]
      if (listening !== undefined) resolve(listening)
    })
  })
  t.equal((await postUser(url, { 'x-request-id': 'cli-post' })).status, 204)
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  t.same(await exited, [0, null], 'exit 0')
  const request = assertUsersTrace(t, receiver.spans, 'cli-post')
  t.match(linesOf(logs, 'cli-post'), [{ msg: 'incoming request', trace_id: request.traceId }, { msg: 'request completed', trace_id: request.traceId }])
})
