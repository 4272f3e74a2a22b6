import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { A_NUMBER, ASchema } from '../../schemas/counters.js'
import { errorResponses } from '../../schemas/common.js'

/** GET /a: a JSON integer. */
const a: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'The number 1797',
      produces: ['application/json'],
      response: { 200: ASchema, ...errorResponses(406) }
    }
  }, () => A_NUMBER)
}

export default a
