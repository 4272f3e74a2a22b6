import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/common.js'

export const FAILING_TEXT = 'Sorry dear user.'

/**
 * GET /failing: a handler that fails with a custom body, as servant's `throwError err503`. Declared
 * like servant's route, a JSON endpoint (an `Accept` without JSON is a 406 before the handler
 * runs); its only answer is the 503. Sent directly: a thrown 5xx would have its text hidden.
 */
const failing: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/failing', {
    schema: {
      summary: 'Always fails, with a custom plain-text body',
      description: `Answers 503 \`text/plain\` \`${FAILING_TEXT}\`, always.`,
      produces: ['application/json'],
      response: {
        503: {
          description: 'The handler failed on purpose.',
          content: { 'text/plain': { schema: Type.String({ examples: [FAILING_TEXT] }) } }
        },
        ...errorResponses(406)
      }
    }
  }, async (_request, reply) => reply.code(503).type('text/plain; charset=utf-8').send(FAILING_TEXT))
}

export default failing
