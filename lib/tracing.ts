import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import type { Span, SpanStatusCode } from '@opentelemetry/api'
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { FastifyBaseLogger, FastifyPluginCallback, FastifyReply, FastifyRequest, LogController } from 'fastify'
import { AccessLogController } from './access-log.js'
import { bindRequestLogger } from './logger.js'
import { packageInfo } from './package-info.js'
import { throttled } from './throttle.js'

// OpenTelemetry tracing, on when the standard variables name a collector: a span per request
// (@fastify/otel), a span per PostgreSQL query (@opentelemetry/instrumentation-pg), a W3C
// `traceparent` continued, and the request's log lines bound to its trace. Off (the default),
// nothing of OpenTelemetry is loaded: the packages stay in node_modules (scripts/bundle.js) and
// are required here only by startTracing(), which the entry points call before the app loads pg.

/** Every module of OpenTelemetry comes through here, at run time, from node_modules. */
const load = createRequire(path.join(import.meta.dirname, 'tracing.js'))

/** The request span's attribute holding the request id (X-Request-Id, the logs' `reqId`), as ECS names it. */
export const REQUEST_ID_ATTRIBUTE = 'http.request.id'

/** How long a flush (the close, SIGTERM) waits for the collector: well within SHUTDOWN_GRACE. */
export const FLUSH_LIMIT_MS = 2000

/** At most one warning this often about spans that could not be exported (a collector down for hours). */
export const WARNING_INTERVAL_MS = 60_000

/** Span attribute values are cut at this length unless OTEL_*ATTRIBUTE_VALUE_LENGTH_LIMIT says: a URL may be 16 kB. */
const ATTRIBUTE_VALUE_LENGTH_LIMIT = 4096

/** What the entry points and plugins/edge/otel.ts use of a started tracing. */
export interface Tracing {
  /** The traces endpoint, as the settings give it (for the log). */
  readonly endpoint: string
  /** @fastify/otel's plugin: the request span. */
  readonly plugin: FastifyPluginCallback
  /** Server option: the request's lines (lib/access-log.ts) wait for the request's span (and its trace ids). */
  readonly logController: LogController
  /** From now on, the SDK's warnings (export failures, dropped spans) go to this logger. */
  logTo: (log: FastifyBaseLogger) => void
  /** Exports the spans ended so far; resolves within `limitMs` whatever the collector does. */
  flush: (limitMs?: number) => Promise<void>
}

let active: Tracing | undefined

/** The tracing startTracing() started in this process, if any. */
export function activeTracing (): Tracing | undefined {
  return active
}

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === 'true'

/**
 * The traces endpoint when tracing is on: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is) or
 * OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces), unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. A value that is no http(s) URL stops the start: the exporter would
 * fall back to localhost:4318 without a word.
 */
export function tracesEndpoint (env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (isTrue(env.OTEL_SDK_DISABLED)) return undefined
  if (env.OTEL_TRACES_EXPORTER?.split(',').some((name) => name.trim() === 'none') === true) return undefined
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    const value = env[name]?.trim()
    if (value === undefined || value === '') continue
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      throw new Error(`env/${name}: expected an http:// or https:// URL, not ${JSON.stringify(value)}`)
    }
    return value
  }
  return undefined
}

/** What the settings ask of the exporter that it does not do; said once, at start. */
function unsupported (env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = []
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL
  if (protocol !== undefined && protocol.trim() !== 'http/json') {
    problems.push(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: traces are sent as http/json (OTLP/HTTP, JSON), which every OTLP/HTTP collector takes`)
  }
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim()).filter((name) => name !== 'otlp' && name !== '')
  if (exporters !== undefined && exporters.length > 0) problems.push(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: traces are exported over OTLP only`)
  return problems
}

/**
 * The server's LogController while tracing: Fastify starts a request's lines (AccessLogController:
 * "incoming request" at debug, the request counted as running) before the first hook runs, so
 * before the request's span starts; held back here, they start when the span starts (with the
 * trace ids, see onRequestSpan), or else before the request's last line.
 */
class TracedLogController extends AccessLogController {
  readonly #waiting = new WeakMap<FastifyRequest, FastifyReply>()

  override incomingRequest (request: FastifyRequest, reply: FastifyReply): void {
    this.#waiting.set(request, reply)
  }

  /** Writes the request's "incoming request" line, if it is still held back. */
  release (request: FastifyRequest): void {
    const reply = this.#waiting.get(request)
    if (reply === undefined) return
    this.#waiting.delete(request)
    super.incomingRequest(request, reply)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    this.release(request)
    super.requestCompleted(error, request, reply)
  }
}

/**
 * Where tracing's warnings go: the app's logger once it is known (logTo), those written before
 * then kept until it is. `limited` ones (export failures: a collector down for hours) are written
 * at most once per `intervalMs`, the next one counting those left out (`suppressed`).
 */
export class TracingWarnings {
  #log: FastifyBaseLogger | undefined
  readonly #early: Array<[object, string]> = []
  readonly #limited: (fields: object, message: string) => void

  constructor (intervalMs = WARNING_INTERVAL_MS, now = Date.now) {
    this.#limited = throttled(intervalMs, (count, fields: object, message: string) => {
      this.now(count === 1 ? fields : { ...fields, suppressed: count - 1 }, message)
    }, now)
  }

  logTo (log: FastifyBaseLogger): void {
    this.#log = log
    for (const [fields, message] of this.#early.splice(0)) log.warn(fields, message)
  }

  now (fields: object, message: string): void {
    if (this.#log === undefined) this.#early.push([fields, message])
    else this.#log.warn(fields, message)
  }

  limited (fields: object, message: string): void {
    this.#limited(fields, message)
  }
}

/** The parts of @fastify/otel used here (its own types declare `request.opentelemetry()` whether or not it is registered). */
interface FastifyOtel {
  FastifyOtelInstrumentation: new (config: {
    instrumentHooks: boolean
    instrumentHandler: boolean
    requestHook: (span: Span, request: FastifyRequest) => void
  }) => { plugin: () => FastifyPluginCallback }
}

/** SpanStatusCode's values, here where @opentelemetry/api is not loaded (tracing off). */
const UNSET: SpanStatusCode.UNSET = 0
const ERROR: SpanStatusCode.ERROR = 2

/**
 * A request span as OpenTelemetry's HTTP server conventions have it, by its status code: up to 499,
 * status unset and no `exception` event (a client's mistake is no failure of the server); from
 * 500 on, status ERROR and `error.type` the status code. @fastify/otel marks the span ERROR, with
 * the error as an exception event, for every error a request's hooks and handler raise, the
 * refusals of 400, 401, 413 or 429 among them, and no option of its says otherwise; the SDK's
 * setStatus() cannot unset a status once set. So the span is exported as corrected here, its
 * other fields as they are. The other spans (the queries') are left as they are.
 */
export function httpServerSpan (span: ReadableSpan): ReadableSpan {
  const status = span.attributes['http.response.status_code']
  if (span.instrumentationScope.name !== '@fastify/otel' || typeof status !== 'number') return span
  if (status < 500) {
    if (span.status.code === UNSET && !span.events.some((event) => event.name === 'exception')) return span
    return exportedAs(span, { status: { code: UNSET }, events: span.events.filter((event) => event.name !== 'exception') })
  }
  // @fastify/otel's ERROR has the error's message as description; a 5xx sent without an error has
  // none: the status code says it all.
  return exportedAs(span, {
    status: span.status.code === ERROR ? span.status : { code: ERROR },
    attributes: { ...span.attributes, 'error.type': String(status) }
  })
}

/** `span` with `changes`: a copy, the span itself being read-only once ended. */
function exportedAs (span: ReadableSpan, changes: Partial<Pick<ReadableSpan, 'status' | 'attributes' | 'events'>>): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: span.attributes,
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
    ...changes
  }
}

/** `next`, handed each span ended as httpServerSpan has it. */
function conventionalSpans (next: SpanProcessor): SpanProcessor {
  return {
    onStart: next.onStart.bind(next),
    onEnd: (span) => { next.onEnd(httpServerSpan(span)) },
    forceFlush: next.forceFlush.bind(next),
    shutdown: next.shutdown.bind(next)
  }
}

/**
 * Starts tracing when the settings ask for it (see tracesEndpoint); once per process. To be called
 * before `pg` is first required: the query spans come from patching it as it loads. Everything
 * else is read by the SDK from the standard variables: OTEL_SERVICE_NAME (default: the package's
 * name), OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION,
 * OTEL_TRACES_SAMPLER and _ARG, OTEL_BSP_* (the batches and their bounded queue).
 */
export function startTracing (): Tracing | undefined {
  if (active !== undefined) return active
  const endpoint = tracesEndpoint()
  if (endpoint === undefined) return undefined

  const api = load('@opentelemetry/api') as typeof import('@opentelemetry/api')
  const { AsyncLocalStorageContextManager } = load('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks')
  const { W3CTraceContextPropagator, getNumberFromEnv, setGlobalErrorHandler } = load('@opentelemetry/core') as typeof import('@opentelemetry/core')
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = load('@opentelemetry/resources') as typeof import('@opentelemetry/resources')
  const { BasicTracerProvider, BatchSpanProcessor } = load('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base')
  const { OTLPTraceExporter } = load('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')

  const warnings = new TracingWarnings()
  for (const problem of unsupported(process.env)) warnings.now({}, problem)
  const diagWarn = (message: string, ...args: unknown[]) => {
    warnings.limited(args[0] instanceof Error ? { err: args[0] } : {}, `tracing: ${message}`)
  }
  api.diag.setLogger({ error: diagWarn, warn: diagWarn, info () {}, debug () {}, verbose () {} }, api.DiagLogLevel.WARN)
  // What the batch processor reports when an export fails (the collector down, or refusing).
  setGlobalErrorHandler((err) => warnings.limited({ err }, 'tracing: spans could not be exported (dropped once the queue is full)'))

  const provider = new BasicTracerProvider({
    // Later ones win: the package's name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': packageInfo.name, 'service.version': packageInfo.version, 'host.name': os.hostname() }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [conventionalSpans(new BatchSpanProcessor(new OTLPTraceExporter()))],
    spanLimits: {
      attributeValueLengthLimit: getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? ATTRIBUTE_VALUE_LENGTH_LIMIT
    }
  })
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  api.trace.setGlobalTracerProvider(provider)

  // Patches pg (and pg-pool) as they load, through Node's require: a query outside a request (the
  // migrations, a probe of the pool) has no parent and makes no trace of its own.
  const { PgInstrumentation } = load('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg')
  // eslint-disable-next-line no-new -- its constructor installs the require hook
  new PgInstrumentation({ requireParentSpan: true })

  const logController = new TracedLogController()
  /** @fastify/otel's requestHook: the span has started, in onRequest. */
  const onRequestSpan = (span: Span, request: FastifyRequest) => {
    const route = request.routeOptions.url
    // As the HTTP conventions name a server span: `POST /users/:userid`, the method alone for no route.
    span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
    span.setAttribute(REQUEST_ID_ATTRIBUTE, request.id)
    // @fastify/otel's url.path is the whole URL: a query string is no part of the path, and may
    // carry values (tokens, personal data) that have no place in traces.
    const query = request.url.indexOf('?')
    if (query !== -1) span.setAttribute('url.path', request.url.slice(0, query))
    const { traceId, spanId, traceFlags } = span.spanContext()
    bindRequestLogger(request.log, { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, '0') })
    logController.release(request)
  }
  const { FastifyOtelInstrumentation } = load('@fastify/otel') as FastifyOtel
  const fastifyOtel = new FastifyOtelInstrumentation({
    // No span per hook (a dozen a request) nor for the handler: the request span is the one the
    // queries are under, and the only one a request costs.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: onRequestSpan
  })

  active = {
    endpoint,
    plugin: fastifyOtel.plugin(),
    logController,
    logTo (log) {
      log.info({ endpoint }, 'tracing: spans exported over OTLP/HTTP (JSON)')
      warnings.logTo(log)
    },
    async flush (limitMs = FLUSH_LIMIT_MS) {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => { timer = setTimeout(resolve, limitMs, 'late') })
      try {
        const outcome = await Promise.race([provider.forceFlush().then(() => 'done' as const, (errors: unknown) => errors), late])
        if (outcome === 'late') warnings.now({ limitMs }, 'tracing: the collector took too long, spans not flushed')
        else if (outcome !== 'done') warnings.now({ err: [outcome].flat()[0] }, 'tracing: spans could not be flushed')
      } finally {
        clearTimeout(timer)
      }
    }
  }
  return active
}
