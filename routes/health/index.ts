import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HealthSchema } from '../../schemas/probes.js'

/** GET /health: liveness for the container's HEALTHCHECK and the reverse proxy. */
const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    // A probe's few bytes: no compression hooks.
    compress: false,
    schema: {
      summary: 'Liveness check',
      produces: ['application/json'],
      response: { 200: HealthSchema }
    },
    // Liveness holds under load too: an overloaded replica is alive, and must not be restarted for
    // it. Nor is it rate-limited: a probe refused with 429 would have the replica restarted.
    config: { pressureHandler: () => {}, rateLimit: false }
  }, () => ({ status: 'ok' as const }))
}

export default health
