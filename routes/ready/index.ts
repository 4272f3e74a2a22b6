import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { RETRY_AFTER_SECONDS, exposed } from '../../lib/errors.js'
import { errorResponses } from '../../schemas/common.js'
import { ReadySchema } from '../../schemas/probes.js'
import { NotReady } from '../../lib/error-codes.js'

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
    if (fastify.closing) throw exposed(new NotReady('the service is shutting down'))
    if (fastify.isUnderPressure()) throw exposed(new NotReady('the service is overloaded'), { 'retry-after': String(RETRY_AFTER_SECONDS) })
    await fastify.store.check()
    return { status: 'ready' as const }
  })
}

export default ready
