import { createRequire } from 'node:module'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { serverOptions } from '../../app.js'
import { AccessLogController } from '../../lib/access-log.js'
import { loadConfig } from '../../lib/config/load.js'
import { activeTracing, httpServerSpan, startTracing, tracesEndpoint, TracingWarnings } from '../../lib/tracing.js'
import { build, logSink } from '../helpers/index.js'

// Tracing is never started in this process: what tracing off leaves of it (nothing), and the
// parts of lib/tracing.ts that need no collector. The spans themselves: test/plugins/edge/otel.test.ts;
// the production bundle (what it holds, a bad endpoint stopping it): test/system/tracing.test.ts.

const OTEL_VARIABLES = Object.keys(process.env).filter((name) => name.startsWith('OTEL_'))
for (const name of OTEL_VARIABLES) delete process.env[name]

t.test('on only with an endpoint, and unless the SDK or its trace exporter is turned off', async (t) => {
  const endpoint = 'http://collector:4318'
  t.equal(tracesEndpoint({}), undefined, 'no endpoint: off')
  t.equal(tracesEndpoint({ OTEL_SERVICE_NAME: 'api', OTEL_TRACES_SAMPLER: 'always_on' }), undefined, 'other variables alone: off')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), undefined, 'blank: off')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), endpoint)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }), `${endpoint}/v1/traces`)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/v1/traces' }), 'https://traces.example/v1/traces', 'the traces one first')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'TRUE' }), undefined, 'OTEL_SDK_DISABLED=true: off')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'false' }), endpoint)
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }), undefined, 'OTEL_TRACES_EXPORTER=none: off')
  t.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'otlp' }), endpoint)
  for (const value of ['collector:4318', 'grpc://collector:4317', 'not a url']) {
    t.throws(() => tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: value }), { message: `env/OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, not ${JSON.stringify(value)}` }, value)
  }
})

t.test('off: nothing of OpenTelemetry is loaded, registered or written, request after request', async (t) => {
  t.equal(startTracing(), undefined, 'no endpoint in the environment: not started')
  t.equal(activeTracing(), undefined)
  t.equal(serverOptions(loadConfig({})).logController.constructor, AccessLogController, 'the request lines of lib/access-log.ts, nothing of tracing\'s')
  const sink = logSink('info')
  const app = await build(t, {}, { logger: sink.logger })
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/hello', headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } })).statusCode, 200)
  t.notOk(app.hasPlugin('@fastify/otel'), 'no request span plugin')
  t.equal(sink.entries.filter((entry) => 'trace_id' in entry).length, 0, 'no trace ids in the log')
  t.notOk(sink.entries.some((entry) => String(entry.msg).startsWith('tracing')), 'no tracing line')
  // prom-client (METRICS) loads @opentelemetry/api for its exemplars; nothing else of OpenTelemetry may be.
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /node_modules[/\\](@fastify[/\\]otel|@opentelemetry[/\\](?!api[/\\])|require-in-the-middle|import-in-the-middle)/.test(file))
  t.same(loaded, [], 'no module of the SDK, the exporter or the instrumentations')
})

t.test('warnings: kept until the logger is known; the limited ones at most one an interval, counting those left out', async (t) => {
  let now = 1_000_000
  const written: Array<[object, string]> = []
  const log = { warn: (fields: object, message: string) => { written.push([fields, message]) } }
  const warnings = new TracingWarnings(60_000, () => now)
  warnings.now({}, 'said at start')
  warnings.limited({ err: 'a' }, 'export failed')
  warnings.limited({ err: 'b' }, 'export failed')
  t.same(written, [], 'nothing before the logger')
  warnings.logTo(log as never)
  t.same(written, [[{}, 'said at start'], [{ err: 'a' }, 'export failed']], 'then what was kept, the second failure left out')
  now += 59_999
  warnings.limited({ err: 'c' }, 'export failed')
  warnings.now({ limitMs: 5 }, 'flush too slow')
  now += 1
  warnings.limited({ err: 'd' }, 'export failed')
  t.same(written.slice(2), [[{ limitMs: 5 }, 'flush too slow'], [{ err: 'd', suppressed: 2 }, 'export failed']], 'one a minute, with the count of those left out; `now` ones always')
  now += 60_000
  warnings.limited({ err: 'e' }, 'export failed')
  t.same(written.at(-1), [{ err: 'e' }, 'export failed'], 'the count starts again')
})

/** An ended span as the SDK hands it to the export: the request's (@fastify/otel's) unless `scope` says. */
function endedSpan (statusCode: number | undefined, status: { code: number, message?: string }, events: string[] = [], scope = '@fastify/otel'): ReadableSpan {
  const context = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }
  return {
    name: 'GET /users/:userid',
    kind: 1,
    spanContext: () => context,
    startTime: [1, 0],
    endTime: [2, 0],
    status,
    attributes: { 'http.route': '/users/:userid', ...(statusCode === undefined ? {} : { 'http.response.status_code': statusCode }) },
    links: [],
    events: events.map((name) => ({ name, time: [1, 5], attributes: { 'exception.message': 'why' } })),
    duration: [1, 0],
    ended: true,
    resource: {} as ReadableSpan['resource'],
    instrumentationScope: { name: scope },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0
  }
}

t.test('a request span exported as the HTTP server conventions say: status unset below 500, ERROR with error.type from 500 on', async (t) => {
  const UNSET = { code: 0 }
  const ERROR = { code: 2, message: 'params/userid must be an integer' }
  for (const statusCode of [100, 200, 302, 400, 404, 499]) {
    const span = endedSpan(statusCode, ERROR, ['exception', 'retry'])
    const exported = httpServerSpan(span)
    t.same(exported.status, UNSET, `${statusCode}: status unset, @fastify/otel's ERROR and its description gone`)
    t.same(exported.events.map((event) => event.name), ['retry'], `${statusCode}: no exception event; the others kept`)
    t.equal(exported.attributes, span.attributes, `${statusCode}: no error.type`)
    t.equal(exported.spanContext(), span.spanContext(), `${statusCode}: the same span`)
    t.same({ ...exported, status: 0, events: 0, spanContext: 0 }, { ...span, status: 0, events: 0, spanContext: 0 }, `${statusCode}: all else as it was`)
    t.same(span.status, ERROR, `${statusCode}: the span itself left as it is`)
  }
  for (const statusCode of [500, 503, 599]) {
    const thrown = httpServerSpan(endedSpan(statusCode, ERROR, ['exception']))
    t.same(thrown.status, ERROR, `${statusCode} from an error: ERROR, its message`)
    t.same(thrown.attributes, { 'http.route': '/users/:userid', 'http.response.status_code': statusCode, 'error.type': String(statusCode) }, `${statusCode}: error.type the status code`)
    t.same(thrown.events.map((event) => event.name), ['exception'], `${statusCode}: the exception event kept`)
    const sent = httpServerSpan(endedSpan(statusCode, UNSET))
    t.same(sent.status, { code: 2 }, `${statusCode} sent without an error: ERROR, no description`)
    t.equal(sent.attributes['error.type'], String(statusCode))
  }
  const unchanged = [
    endedSpan(200, UNSET),
    endedSpan(404, UNSET, ['retry']),
    endedSpan(undefined, ERROR, ['exception']),
    endedSpan(400, ERROR, ['exception'], '@opentelemetry/instrumentation-pg')
  ]
  for (const span of unchanged) t.equal(httpServerSpan(span), span, `${span.instrumentationScope.name} ${String(span.attributes['http.response.status_code'])}: exported as it is, no copy`)
})
