import metrics, { type IMetricsPluginOptions } from 'fastify-metrics'
import type { FastifyInstance } from 'fastify'

/** The route label of requests that matched no route: one value, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * Prometheus metrics (fastify-metrics over prom-client) at GET /metrics, when METRICS is on:
 * the process metrics of prom-client, and `http_request_duration_seconds`, a histogram of every
 * request (its `_count` is the request count) by `method`, `route` and `status_code`. The route
 * label is the route's pattern (`/users/:userid`), `unmatched` for a request that matched none,
 * so the number of series stays bounded whatever clients send. /metrics is not counted itself
 * and, as an operational route, is left out of the API description and the OpenAPI document.
 * With METRICS off nothing is registered: no route, no hook.
 */
export const autoConfig = (fastify: FastifyInstance): Partial<IMetricsPluginOptions> => {
  if (!fastify.config.METRICS) {
    return { endpoint: null, clearRegisterOnInit: true, defaultMetrics: { enabled: false }, routeMetrics: { enabled: false } }
  }
  return {
    endpoint: {
      url: '/metrics',
      method: 'GET',
      schema: { hide: true },
      config: { disableMetrics: true },
      logLevel: 'warn',
      handler: () => {}
    },
    // prom-client's registry is one per process: a new app (in the tests) starts it afresh.
    clearRegisterOnInit: true,
    routeMetrics: {
      enabled: { histogram: true, summary: false },
      registeredRoutesOnly: false,
      invalidRouteGroup: UNMATCHED_ROUTE,
      methodBlacklist: []
    }
  }
}

export default metrics
