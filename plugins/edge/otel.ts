import fp from 'fastify-plugin'
import { activeTracing } from '../../lib/tracing.js'

/**
 * OpenTelemetry's request spans (@fastify/otel), when tracing was started (lib/tracing.ts: by the
 * entry points, with OTEL_EXPORTER_OTLP_ENDPOINT): a span per request from its onRequest hook,
 * named by the route (`POST /users`), with the route pattern, method, status and request id, the
 * caller's `traceparent` continued, the PostgreSQL queries under it; the request's only span, its
 * status as the HTTP server conventions say (lib/tracing.ts, httpServerSpan). Its hook runs first
 * but for the metrics' count of requests in flight and CORS's (plugins/edge/ loads in file order,
 * CORS after the metrics; the overload and rate-limit checks are the
 * routes' own hooks, which run after), so the span covers their refusals too. Tracing off,
 * nothing is registered: no hook, no decorator.
 *
 * The spans are exported in batches; the close (SIGTERM) flushes those ended so far, waiting for
 * the collector at most FLUSH_LIMIT_MS.
 */
export default fp(async function tracing (fastify) {
  const tracing = activeTracing()
  if (tracing === undefined) return
  tracing.logTo(fastify.log)
  // @fastify/otel replaces setNotFoundHandler by one that wraps the handler in a span of its own,
  // whatever its instrumentHandler says: a second span for every 404 and 405, whose `hook.name`
  // is the whole chain of plugin names, install paths among them. Fastify's own is put back.
  const { setNotFoundHandler } = fastify
  await fastify.register(tracing.plugin)
  fastify.setNotFoundHandler = setNotFoundHandler
  fastify.addHook('onClose', async () => { await tracing.flush() })
}, { name: 'otel' })
