import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ALBERT, ISAAC, sampleUserResponse } from '../schemas/user.js'
import { A_NUMBER } from '../schemas/counters.js'
import { errorResponses } from '../schemas/common.js'

/** GET /isaac and GET /albert: the tutorial's two sample users, constants (not the user store). */
const sampleUsers: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/isaac', {
    schema: {
      summary: 'Isaac Newton, a sample user',
      description: 'Declares the headers X-An-Int and X-A-Bool, and has none to send: both are omitted.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ISAAC, false), ...errorResponses(406) }
    }
  }, () => ISAAC)

  fastify.get('/albert', {
    schema: {
      summary: 'Albert Einstein, a sample user',
      description: 'Sends the headers `X-An-Int: 1797` and `X-A-Bool: true`.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ALBERT, true), ...errorResponses(406) }
    }
  }, (_request, reply) => {
    reply.header('x-an-int', A_NUMBER).header('x-a-bool', true)
    return ALBERT
  })
}

export default sampleUsers
