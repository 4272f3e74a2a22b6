import fp from 'fastify-plugin'
import type { onResponseHookHandler } from 'fastify'
import { Registry, collectDefaultMetrics } from 'prom-client'
import { METRICS_CONNECTION_LIMIT, boundedServer, type ListenerBounds } from '../../lib/connections.js'
import { HostMissing } from '../../lib/error-codes.js'
import { errorBody } from '../../lib/errors.js'
import { clientErrorHandler, lacksHost } from '../../lib/framework-errors.js'
import { buildInfo } from '../../lib/metrics/build-info.js'
import { memoryLimitSeries } from '../../lib/metrics/memory-limit.js'
import { Refusals } from '../../lib/metrics/refusals.js'
import { family } from '../../lib/metrics/text-format.js'
import { checkReady } from '../../lib/readiness.js'
import { DurationHistogram, routeSeries } from '../../lib/request-durations.js'
import { API_HEADERS } from '../../lib/security-headers.js'

/** The route label of requests that matched no route: one value, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched'

/** prom-client's process metrics (CPU, memory, event loop, GC): collected once per process. */
let processMetrics: Registry | undefined

const JSON_TYPE = 'application/json; charset=utf-8'

/** The metrics port's answer to an HTTP/1.1 request without Host, as the API's (plugins/edge/host.ts). */
const HOST_MISSING = new HostMissing()

/**
 * How long a scrape waits for the readiness check (the store's, a query with a database) before
 * `app_ready` says 0: the readiness probe's own timeout (timeoutSeconds: 1 in
 * deploy/kubernetes/base/deployment.yaml), past which the probe counts a failure too. The scrape
 * itself answers on time, so a slow database is not taken for a replica that is down.
 */
export const READY_CHECK_TIMEOUT_MS = 1000

/**
 * The metrics listener's own bounds, far below the API's: a scrape is one GET without a body,
 * answered at once, so a connection that has not sent its request within seconds, or that stays
 * silent that long, is no scraper's. A scraper that keeps its connection between scrapes opens a
 * new one when this one has been closed.
 */
export const METRICS_LISTENER: ListenerBounds = {
  maxConnections: METRICS_CONNECTION_LIMIT,
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  keepAliveTimeout: 5_000,
  idleTimeout: 10_000
}

/**
 * Prometheus metrics with prom-client, when METRICS is on: prom-client's process metrics, and
 * `http_request_duration_seconds`, a histogram of every request (its `_count` is the request count)
 * by `method`, `route` and `status_code`. The route label is the route's pattern (`/users/:userid`),
 * `unmatched` for a request that matched none, so the number of series stays bounded whatever
 * clients send. Beside them (docs/operations.md has the table): the requests in flight, the
 * refusals by cause (lib/metrics/refusals.ts), what runs (lib/metrics/build-info.ts), readiness as
 * GET /ready would answer it (lib/readiness.ts), the memory limit (lib/metrics/memory-limit.ts),
 * and with the PostgreSQL store its pool and queries (lib/postgres/pool-metrics.ts).
 *
 * GET /metrics is served on a listener of its own (METRICS_HOST:METRICS_PORT, opened when the app
 * is ready, closed with it), not among the API's routes: a proxy in front of the API cannot expose
 * it by a path variant its rules did not expect (`/metrics/`, `/metrics%2F`), and it answers while
 * the API sheds load. It is a plain node:http server: one route, no need for a second Fastify.
 * With METRICS off nothing is registered: no listener, no hook, no pool wrapped.
 *
 * Whoever reaches that port must not take the API down: the listener keeps METRICS_CONNECTION_LIMIT
 * connections at most, within the descriptors the API's own cap leaves free (lib/connections.ts),
 * closes any more at once (logged at most every 10 s), and cuts a connection past the timeouts of
 * METRICS_LISTENER. A request too slow or not HTTP gets the API's JSON error body, as the API's
 * do (lib/framework-errors.ts).
 *
 * The histogram is kept by lib/request-durations.ts, not prom-client's Histogram: each route has
 * an onResponse hook of its own that knows the route's pattern, and keeps the series of each
 * method and status it has seen, so a request costs a bucket search and three additions. With
 * prom-client's `labels(...).observe()` every request validated and hashed its labels, and the
 * route's pattern came from `request.routeOptions`, which builds an object of twelve options per
 * call. fastify-metrics does more: a timer and a label object per request. The requests in flight
 * are one number: added to when a request arrives, taken from when its response closes (the
 * `close` of Node's response comes once, answered or cut off, where Fastify's onResponse does not
 * run for a request whose client went away). Refusals are counted in an onError hook, which runs
 * only for a request that ends with an error. Everything else is read when scraped.
 *
 * Readiness reads the decorators of `shutdown`, `under-pressure` and `collections`, plugins registered
 * after this one: they are looked for once the app is ready, and `app_ready` is left out without
 * them (an app built of a part of the plugins).
 */
export default fp(async function metrics (fastify) {
  const { METRICS, METRICS_HOST, METRICS_PORT } = fastify.config
  if (!METRICS) return
  if (processMetrics === undefined) {
    processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics })
  }
  const durations = new DurationHistogram('http_request_duration_seconds',
    'Request duration in seconds, by method, route pattern and status code',
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
  const measure = (seriesOf: ReturnType<typeof routeSeries>): onResponseHookHandler => function measureRequest (request, reply, done) {
    seriesOf(request.method, reply.statusCode).observe(reply.elapsedTime / 1000)
    done()
  }

  // Every request from its first hook on, refused ones included (this plugin's hooks come before
  // those of the edge plugins that refuse); not the scrapes, which the listener below answers.
  let inFlight = 0
  const answered = () => { inFlight-- }
  fastify.addHook('onRequest', function countInFlight (_request, reply, done) {
    inFlight++
    reply.raw.on('close', answered)
    done()
  })
  const refusals = new Refusals()
  fastify.addHook('onError', function countRefusal (_request, _reply, error, done) {
    refusals.count(error)
    done()
  })

  // Every route registered from now on: those of the plugins that depend on this one, and routes/.
  fastify.addHook('onRoute', (route) => {
    // A new array: the GET route and its automatic HEAD route share the original one.
    route.onResponse = [...[route.onResponse ?? []].flat(), measure(routeSeries(durations, route.url))] as typeof route.onResponse
  })
  // The requests no route matched (404, 405) are answered in the not-found context, which only
  // the hooks of the whole app reach.
  const measureUnmatched = measure(routeSeries(durations, UNMATCHED_ROUTE))
  fastify.addHook('onResponse', function unmatched (request, reply, done) {
    if (request.is404) measureUnmatched.call(this, request, reply, done)
    else done()
  })

  const build = buildInfo()
  /** The series read when scraped, once the app is ready: readiness, and the pool's with a database. */
  let ready: (() => Promise<boolean>) | undefined
  let pool: { render: () => string } | undefined
  const scrape = async () => {
    const [own, isReady] = await Promise.all([processMetrics!.metrics(), ready?.()])
    return [
      own, '\n',
      durations.render(),
      family('http_requests_in_flight', 'gauge', 'API requests received and not yet answered', [[{}, inFlight]]),
      refusals.render(),
      build,
      family('app_ready', 'gauge', '1 while GET /ready would answer 200, 0 while it would answer 503 (shutting down, overloaded, store unreachable)',
        isReady === undefined ? [] : [[{}, isReady ? 1 : 0]]),
      memoryLimitSeries(),
      pool?.render() ?? ''
    ].join('')
  }

  const server = boundedServer(METRICS_LISTENER, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const answer = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { ...API_HEADERS, ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) })
      res.end(req.method === 'HEAD' ? undefined : body)
    }
    const error = (status: number, message: string, headers?: Record<string, string>, code?: string) =>
      answer(status, JSON_TYPE, JSON.stringify(errorBody(status, message, code)), headers)
    if (lacksHost(req)) return error(400, HOST_MISSING.message, { connection: 'close' }, HOST_MISSING.code)
    if (path !== '/metrics') return error(404, `Route ${req.method}:${path} not found: this port serves GET /metrics`)
    if (req.method !== 'GET' && req.method !== 'HEAD') return error(405, `Method ${req.method} is not allowed on /metrics`, { allow: 'GET, HEAD' })
    scrape().then(
      (text) => answer(200, processMetrics!.contentType, text),
      (err: unknown) => {
        fastify.log.error({ err }, 'metrics could not be collected')
        error(500, 'Internal Server Error')
      })
  }, (dropped) => {
    fastify.log.warn({ limit: METRICS_CONNECTION_LIMIT, dropped }, 'metrics connection refused: the metrics listener has as many as it may keep')
  })
  server.on('clientError', clientErrorHandler.bind(fastify))

  fastify.addHook('onReady', async () => {
    if (fastify.hasDecorator('closing') && fastify.hasDecorator('isUnderPressure') && fastify.hasDecorator('store')) {
      ready = () => readyWithin(READY_CHECK_TIMEOUT_MS, () => checkReady({
        closing: fastify.closing,
        isUnderPressure: () => fastify.isUnderPressure(),
        store: fastify.store
      }))
    }
    if (fastify.hasDecorator('pg')) pool = (await import('../../lib/postgres/pool-metrics.js')).poolMetrics(fastify.pg.pool)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(METRICS_PORT, METRICS_HOST, () => {
        server.off('error', reject)
        resolve()
      })
    })
    // Where a scraper finds it (METRICS_PORT=0 takes any free port).
    fastify.log.info({ address: server.address() }, 'metrics listening')
  })
  fastify.addHook('onClose', async () => {
    if (!server.listening) return
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
}, { name: 'metrics', dependencies: ['config'] })

/** Whether `check` resolves within `ms`: false when it rejects or has not settled by then. */
async function readyWithin (ms: number, check: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, ms, false) })
  try {
    return await Promise.race([check().then(() => true, () => false), late])
  } finally {
    clearTimeout(timer)
  }
}
