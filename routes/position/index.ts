import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PositionParamsSchema, PositionSchema } from '../../schemas/position.js'
import { errorResponses } from '../../schemas/common.js'

/** GET /position/:x/:y: the two integer captures, echoed as a Position. */
const position: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/:x/:y', {
    // Answers of a few dozen bytes, far below the compression threshold (1 kB): no compression hooks.
    compress: false,
    schema: {
      summary: 'A position from two integers',
      description: '`/position/-3/+4` → `{"xCoord":-3,"yCoord":4}`. A capture that is not a decimal integer is a 400.',
      produces: ['application/json'],
      params: PositionParamsSchema,
      response: { 200: PositionSchema, ...errorResponses(400, 406) }
    }
  }, (request) => ({ xCoord: request.params.x, yCoord: request.params.y }))
}

export default position
