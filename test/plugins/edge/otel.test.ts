import t from 'tap'
import { activeTracing, REQUEST_ID_ATTRIBUTE, startTracing } from '../../../lib/tracing.js'
import { CALLER_SPAN_ID, CLIENT, linesOf, otlpReceiver, SERVER, TRACE_ID, tree, USER } from './otlp-receiver.js'

// Tracing end to end: the spans the service exports, received by an OTLP/HTTP endpoint of this
// test's own, in this process (the app as the tests build it). From the production entry
// (dist/bundle/server.js) and `fastify start` (dist/cli.js), processes of their own:
// test/system/otel.test.ts.

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
const { build, buildPlugins, logSink, testDatabase } = await import('../../helpers/index.js')
const { packageInfo } = await import('../../../lib/package-info.js')

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
  // One line per request, when it ends (lib/access-log.ts), with what "incoming request" said.
  t.same(lines.map((entry) => entry.msg), ['request completed'])
  t.match(lines[0], { req: { method: 'POST', url: '/users' }, res: { statusCode: 204 } })
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
  t.match(linesOf(sink.entries, 'otel-continued'), [{ trace_id: TRACE_ID, span_id: request!.spanId, msg: 'request completed' }])

  // A caller that does not sample: nothing recorded (parent-based sampling), the log lines still join its trace.
  const before = collector.spans.length
  await app.inject({ url: '/hello', headers: { traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN_ID}-00`, 'x-request-id': 'otel-unsampled' } })
  await tracing.flush()
  t.equal(collector.spans.length, before, 'nothing exported')
  t.match(linesOf(sink.entries, 'otel-unsampled'), [{ trace_id: '1'.repeat(32), trace_flags: '00', msg: 'request completed' }])
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
