import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ALBERT, ISAAC, UserSchema, type User } from '../schemas/user.js'
import { A_NUMBER } from '../schemas/counters.js'
import { SafeInteger, errorResponses } from '../schemas/common.js'

/** A sample user's response: a User that may come with the two example headers. */
function sampleUserResponse (example: User) {
  return Type.Object(UserSchema.properties, {
    examples: [example],
    headers: {
      'X-An-Int': SafeInteger({ description: 'An example integer header; sent by /albert only.', examples: [A_NUMBER] }),
      'X-A-Bool': Type.Boolean({ description: 'An example boolean header; sent by /albert only.', examples: [true] })
    }
  })
}

/** GET /isaac and GET /albert: the tutorial's two sample users, constants (not the user store). */
const sampleUsers: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/isaac', {
    schema: {
      summary: 'Isaac Newton, a sample user',
      description: 'Declares the headers X-An-Int and X-A-Bool, and has none to send: both are omitted.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ISAAC), ...errorResponses(406) }
    }
  }, async () => ISAAC)

  fastify.get('/albert', {
    schema: {
      summary: 'Albert Einstein, a sample user',
      description: 'Sends the headers `X-An-Int: 1797` and `X-A-Bool: true`.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ALBERT), ...errorResponses(406) }
    }
  }, async (_request, reply) => {
    reply.header('x-an-int', A_NUMBER).header('x-a-bool', true)
    return ALBERT
  })
}

export default sampleUsers
