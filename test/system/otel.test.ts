import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { FLUSH_LIMIT_MS, REQUEST_ID_ATTRIBUTE } from '../../lib/tracing.js'
import { projectRoot } from '../../lib/project-root.js'
import { startServer, testDatabase, until } from '../helpers/index.js'
import { CALLER_SPAN_ID, linesOf, otlpReceiver, SERVER, TRACE_ID, tree, USER, type ReceivedSpan } from '../plugins/edge/otlp-receiver.js'

// Tracing end to end from the entry points that start it themselves, before anything loads pg:
// the production entry (dist/bundle/server.js) and `fastify start` (dist/cli.js), each a process
// of its own, exporting to an OTLP/HTTP endpoint of the test's; SIGTERM's flush and a collector
// that refuses or hangs are waited out in real time. In-process: test/plugins/edge/otel.test.ts.

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
  t.same(lines.map((entry) => entry.msg), ['request completed'])
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
  t.same(linesOf(server.logs, 'bundle-off').map((entry) => entry.msg), ['request completed'])
  t.notOk(server.logs.some((entry) => 'trace_id' in entry || String(entry.msg).startsWith('tracing')), 'no trace ids, no tracing line')
})

t.test('the production entry follows OTEL_TRACES_SAMPLER: always_off records nothing; the log lines have the trace ids, unsampled', async (t) => {
  const receiver = await otlpReceiver(t)
  const server = await startServer(t, { ...BATCH_AT_CLOSE, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_off' })
  t.equal((await fetch(`${server.url}/hello`, { headers: { 'x-request-id': 'bundle-unsampled' } })).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.equal(receiver.received.requests, 0, 'nothing exported')
  t.match(linesOf(server.logs, 'bundle-unsampled'), [{ msg: 'request completed', trace_id: /^[0-9a-f]{32}$/, trace_flags: '00' }])
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
  t.match(linesOf(logs, 'cli-post'), [{ msg: 'request completed', trace_id: request.traceId, req: { method: 'POST' } }])
})
