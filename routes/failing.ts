import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/common.js'
import { FAILING_TEXT, FailingResponse } from '../schemas/failing.js'

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
        503: FailingResponse,
        ...errorResponses(406)
      }
    }
  }, async (_request, reply) => reply.code(503).type('text/plain; charset=utf-8').send(FAILING_TEXT))
}

export default failing
