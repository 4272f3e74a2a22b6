import fp from 'fastify-plugin'
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** The route label of requests that matched no route: one value, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route's requests are not measured (GET /metrics itself). */
    metrics?: boolean
  }
}

/** prom-client's process metrics (CPU, memory, event loop, GC): collected once per process. */
let processMetrics: Registry | undefined

/**
 * Prometheus metrics with prom-client at GET /metrics, when METRICS is on: prom-client's process
 * metrics, and `http_request_duration_seconds`, a histogram of every request (its `_count` is the
 * request count) by `method`, `route` and `status_code`. The route label is the route's pattern
 * (`/users/:userid`), `unmatched` for a request that matched none, so the number of series stays
 * bounded whatever clients send. /metrics is not counted itself and, as an operational route, is
 * left out of the API description and the OpenAPI document. With METRICS off nothing is
 * registered: no route, no hook.
 *
 * prom-client directly rather than fastify-metrics: the same histogram costs a request about
 * 3 µs of CPU here (a CPU profile under load), against 8 µs: fastify-metrics starts a timer and
 * builds a label object per request; here the duration is Fastify's own `elapsedTime` and each
 * series' child is kept in a map (prom-client still checks and hashes its labels at every
 * observation: most of the 3 µs).
 */
export default fp(async function metrics (fastify) {
  if (!fastify.config.METRICS) return
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
    const { config, url } = request.routeOptions
    if (config.metrics !== false) {
      const route = request.is404 || url === undefined ? UNMATCHED_ROUTE : url
      const key = `${request.method} ${reply.statusCode} ${route}`
      let child = series.get(key)
      if (child === undefined) {
        child = durations.labels(request.method, route, String(reply.statusCode))
        series.set(key, child)
      }
      child.observe(reply.elapsedTime / 1000)
    }
    done()
  })

  fastify.get('/metrics', {
    schema: { hide: true },
    // Not measured itself, and answered under overload too: that is when it is wanted.
    config: { metrics: false, pressureHandler: () => {} },
    logLevel: 'warn'
  }, async (_request, reply) => {
    reply.type(requests.contentType)
    return `${await processMetrics!.metrics()}\n${await requests.metrics()}`
  })
}, { name: 'metrics', dependencies: ['config'] })
