import type { FastifyInstance, InjectOptions } from 'fastify'
import t, { type Test } from 'tap'
import { REQUEST_ID_ATTRIBUTE, startTracing } from '../../../lib/tracing.js'
import { CLIENT, otlpReceiver, SERVER, type ReceivedSpan } from './otlp-receiver.js'

// What docs/operations.md ("Traces") promises of the spans, for every kind of request: exactly one
// span, the request's (and, on PostgreSQL, its queries under it), named by its route; its status
// as OpenTelemetry's HTTP server conventions have it: unset up to 499, ERROR from 500 on with
// `error.type` and the error's `exception` event; and no attribute but the request's.

// Tracing started before the helpers load pg, as the entry points start it; the batches wait for
// a flush (a delay of an hour), so that each test knows when its spans are sent.
const collector = await otlpReceiver(t)
Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '3600000' })
const tracing = startTracing()!
const { build, buildPlugins, testDatabase, until } = await import('../../helpers/index.js')

/** OTLP's status codes. */
const UNSET = 0
const ERROR = 2

/** What a request's span is expected to be. */
interface Expected {
  /** Its name: the method and the route, or the method alone when no route matched. */
  name: string
  /** The route's pattern, none when no route matched. */
  route?: string
  /** The status code it answered. */
  status: number
  /** The error it failed with (a 5xx), recorded as the span's exception: its type (its code, else its name) and message. */
  exception?: { type: string, message: string }
}

/** `request` sent to `app` with a request id of its own, answered `expected.status`. */
async function send (t: Test, app: FastifyInstance, reqId: string, request: InjectOptions, expected: Expected): Promise<void> {
  const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': reqId } })
  t.equal(res.statusCode, expected.status, `${reqId}: answered ${expected.status}`)
}

/**
 * Checks the trace of the request `reqId` (its spans exported by now): one span, the request's,
 * a server span named and attributed as `expected` says, its status as the conventions say.
 * Returns the spans of its trace.
 */
function assertRequestSpan (t: Test, reqId: string, method: string, path: string, expected: Expected): ReceivedSpan[] {
  const request = collector.spans.find((span) => span.attributes[REQUEST_ID_ATTRIBUTE] === reqId)
  if (request === undefined) {
    t.fail(`${reqId}: no span`)
    return []
  }
  const trace = collector.trace(request.traceId)
  t.same(trace.filter((span) => span.scope !== '@opentelemetry/instrumentation-pg').map((span) => span.name), [expected.name], `${reqId}: one span, the request's`)
  t.equal(request.kind, SERVER, `${reqId}: a server span`)
  t.same(request.attributes, {
    'fastify.root': '@fastify/otel',
    'http.request.method': method,
    'url.path': path,
    ...(expected.route === undefined ? {} : { 'http.route': expected.route }),
    [REQUEST_ID_ATTRIBUTE]: reqId,
    'http.response.status_code': expected.status,
    ...(expected.status >= 500 ? { 'error.type': String(expected.status) } : {})
  }, `${reqId}: its attributes, all of them`)
  if (expected.status < 500) {
    t.same(request.status, { code: UNSET }, `${reqId}: status unset, no description`)
    t.same(request.events, [], `${reqId}: no exception event`)
  } else if (expected.exception === undefined) {
    t.same(request.status, { code: ERROR }, `${reqId}: ERROR, no description (the status code says it)`)
    t.same(request.events, [], `${reqId}: no exception event: there was no error`)
  } else {
    t.same(request.status, { code: ERROR, message: expected.exception.message }, `${reqId}: ERROR, the error's message`)
    t.match(request.events, [{ name: 'exception', attributes: { 'exception.type': expected.exception.type, 'exception.message': expected.exception.message, 'exception.stacktrace': String } }], `${reqId}: the error, as an exception event`)
    t.equal(request.events.length, 1, `${reqId}: once`)
  }
  return trace
}

/** Sends each request to `app`, flushes, and checks each one's trace. */
async function assertRequests (t: Test, app: FastifyInstance, cases: Array<[string, InjectOptions & { method: string, url: string }, Expected]>): Promise<void> {
  for (const [reqId, request, expected] of cases) await send(t, app, reqId, request, expected)
  await tracing.flush()
  for (const [reqId, request, expected] of cases) assertRequestSpan(t, reqId, request.method, request.url.split('?')[0]!, expected)
}

const JSON_BODY = { 'content-type': 'application/json' }

t.test('a route\'s answers, a HEAD, no route (404), no such method (405), a refused body (413), a validation 400, an authentication 401: one span each, none an error', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  await assertRequests(t, app, [
    ['span-200', { method: 'GET', url: '/hello?name=Ada' }, { name: 'GET /hello', route: '/hello', status: 200 }],
    ['span-head', { method: 'HEAD', url: '/hello' }, { name: 'HEAD /hello', route: '/hello', status: 200 }],
    ['span-404', { method: 'GET', url: '/no/such/path' }, { name: 'GET', status: 404 }],
    // Answered by not-found.ts's onRequest hook, before Fastify would read the body.
    ['span-404-body', { method: 'POST', url: '/no/such/path', headers: JSON_BODY, payload: '{}' }, { name: 'POST', status: 404 }],
    ['span-405', { method: 'DELETE', url: '/hello' }, { name: 'DELETE', status: 405 }],
    ['span-400', { method: 'GET', url: '/users/abc' }, { name: 'GET /users/:userid', route: '/users/:userid', status: 400 }],
    ['span-400-body', { method: 'POST', url: '/users', headers: JSON_BODY, payload: '{"name":1}' }, { name: 'POST /users', route: '/users', status: 400 }],
    ['span-413', { method: 'POST', url: '/users', headers: JSON_BODY, payload: `{"name":"${'x'.repeat(100_000)}"}` }, { name: 'POST /users', route: '/users', status: 413 }],
    ['span-401', { method: 'GET', url: '/users/list-all' }, { name: 'GET /users/list-all', route: '/users/list-all', status: 401 }]
  ])
})

t.test('a refusal of the rate limit (429): one span, not an error', async (t) => {
  const app = await build(t, { RATE_LIMIT_MAX: '1' })
  await app.inject({ url: '/hello' })
  await assertRequests(t, app, [
    ['span-429', { method: 'GET', url: '/hello' }, { name: 'GET /hello', route: '/hello', status: 429 }]
  ])
})

t.test('a handler that throws (500) and one that answers 503: one span each, ERROR, error.type the status code; the thrown error as an exception event', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.get('/fails', async () => { throw new Error('broken') })
    server.get('/unavailable', async (_request, reply) => reply.code(503).send('later'))
  }, { DOCS_CATCH_ALL: 'false' })
  await assertRequests(t, app, [
    ['span-500', { method: 'GET', url: '/fails' }, { name: 'GET /fails', route: '/fails', status: 500, exception: { type: 'Error', message: 'broken' } }],
    ['span-503', { method: 'GET', url: '/unavailable' }, { name: 'GET /unavailable', route: '/unavailable', status: 503 }]
  ])
})

t.test('overloaded (503 from under-pressure\'s onRequest hook): one span, ERROR, its error as an exception event', async (t) => {
  const app = await build(t, { PRESSURE_MAX_HEAP_USED_BYTES: '1' })
  await until(async () => (await app.inject({ url: '/a' })).statusCode === 503)
  await assertRequests(t, app, [
    ['span-overloaded', { method: 'GET', url: '/hello' }, { name: 'GET /hello', route: '/hello', status: 503, exception: { type: 'FST_UNDER_PRESSURE', message: 'The service is overloaded: retry later' } }]
  ])
})

t.test('on PostgreSQL: the queries are the request span\'s children, whatever the answer', async (t) => {
  const app = await build(t, { DATABASE_URL: await testDatabase(), DOCS_CATCH_ALL: 'false' })
  const cases: Array<[string, string, Expected]> = [
    ['span-pg-200', '/users', { name: 'GET /users', route: '/users', status: 200 }],
    ['span-pg-404', '/users/12345', { name: 'GET /users/:userid', route: '/users/:userid', status: 404 }]
  ]
  for (const [reqId, url, expected] of cases) await send(t, app, reqId, { url }, expected)
  await tracing.flush()
  for (const [reqId, url, expected] of cases) {
    const trace = assertRequestSpan(t, reqId, 'GET', url, expected)
    const request = trace.find((span) => span.kind === SERVER)!
    const queries = trace.filter((span) => span !== request)
    t.ok(queries.some((query) => String(query.attributes['db.query.text']).startsWith('SELECT')), `${reqId}: its query`)
    for (const query of queries) {
      t.match(query, { kind: CLIENT, scope: '@opentelemetry/instrumentation-pg' }, `${reqId}: ${query.name}, PostgreSQL's`)
      t.ok(query.parentSpanId === request.spanId || queries.some((other) => other.spanId === query.parentSpanId), `${reqId}: ${query.name}, under the request span`)
    }
  }
})

t.test('no attribute of any span exported here holds code or runs long', async (t) => {
  await tracing.flush()
  t.ok(collector.spans.length > 20, 'the spans of the tests above')
  // The SQL of the queries aside (the statement, without its values).
  const long = collector.spans.flatMap((span) => Object.entries(span.attributes)
    .filter(([key, value]) => key !== 'db.query.text' && String(value).length > 100)
    .map(([key, value]) => `${span.name}: ${key}, ${String(value).length} characters`))
  t.same(long, [], 'none over 100 characters')
})
