import fp from 'fastify-plugin'
import { activeTracing } from '../../lib/tracing.js'

/**
 * OpenTelemetry's request spans (@fastify/otel), when tracing was started (lib/tracing.ts: by the
 * entry points, with OTEL_EXPORTER_OTLP_ENDPOINT): a span per request from its onRequest hook,
 * named by the route (`POST /users`), with the route pattern, method, status and request id, the
 * caller's `traceparent` continued, the PostgreSQL queries under it. Its hook runs first but for
 * CORS's (plugins/edge/ loads in file order; the overload and rate-limit checks are the
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
  await fastify.register(tracing.plugin)
  fastify.addHook('onClose', async () => { await tracing.flush() })
}, { name: 'tracing' })
