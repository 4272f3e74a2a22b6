import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../schemas/common.js'

const ReadySchema = Type.Object({
  status: Type.Literal('ready')
}, { examples: [{ status: 'ready' }] })

/**
 * GET /ready: readiness, for the reverse proxy and the orchestrator: 200 when this replica can
 * serve (its store answers), 503 with Retry-After when it cannot. Liveness is /health.
 */
const ready: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'Readiness check',
      description: '503 with `Retry-After` while the store (the database) does not answer.',
      produces: ['application/json'],
      response: { 200: ReadySchema, ...errorResponses(406, 503) }
    }
  }, async () => {
    await fastify.store.check()
    return { status: 'ready' as const }
  })
}

export default ready
