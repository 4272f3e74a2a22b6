import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { checkReady } from '../../lib/readiness.js'
import { errorResponses } from '../../schemas/common.js'
import { ReadySchema } from '../../schemas/probes.js'

/**
 * GET /ready: readiness, for the reverse proxy and the orchestrator: 200 when this replica can
 * take requests; 503 from the moment it starts shutting down (SIGTERM), while it is overloaded,
 * and while its store (the database) does not answer. Liveness is /health. While the service
 * starts, its port is not open yet: not ready either.
 */
const ready: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    // A probe's few bytes: no compression hooks.
    compress: false,
    schema: {
      summary: 'Readiness check',
      description: '503 while shutting down, while overloaded (with `Retry-After`), and while the store (the database) does not answer (with `Retry-After`).',
      produces: ['application/json'],
      response: { 200: ReadySchema, ...errorResponses(406, 503) }
    },
    // Overload does not refuse this route: it answers for itself, below. The rate limit does not
    // either: a probe refused with 429 would take a ready replica out of service.
    config: { pressureHandler: () => {}, rateLimit: false }
  }, async () => {
    // lib/readiness.ts: the same check gives the `app_ready` metric.
    await checkReady(fastify)
    return { status: 'ready' as const }
  })
}

export default ready
