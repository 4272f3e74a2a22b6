import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ALBERT, ISAAC, UserSchema, type User } from '../schemas/user.js'
import { A_NUMBER } from '../schemas/counters.js'
import { SafeInteger, errorResponses, withHeaders } from '../schemas/common.js'

const X_AN_INT = SafeInteger({ description: 'An example integer header; sent by /albert only.', examples: [A_NUMBER] })
const X_A_BOOL = Type.Boolean({ description: 'An example boolean header; sent by /albert only.', examples: [true] })

/** A sample user's response: a User with the two example headers, always sent or never. */
function sampleUserResponse (example: User, sent: boolean) {
  const headers = sent
    ? Type.Object({ 'X-An-Int': X_AN_INT, 'X-A-Bool': X_A_BOOL })
    : Type.Object({ 'X-An-Int': Type.Optional(X_AN_INT), 'X-A-Bool': Type.Optional(X_A_BOOL) })
  return withHeaders(UserSchema, headers, { examples: [example] })
}

/** GET /isaac and GET /albert: the tutorial's two sample users, constants (not the user store). */
const sampleUsers: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/isaac', {
    schema: {
      summary: 'Isaac Newton, a sample user',
      description: 'Declares the headers X-An-Int and X-A-Bool, and has none to send: both are omitted.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ISAAC, false), ...errorResponses(406) }
    }
  }, async () => ISAAC)

  fastify.get('/albert', {
    schema: {
      summary: 'Albert Einstein, a sample user',
      description: 'Sends the headers `X-An-Int: 1797` and `X-A-Bool: true`.',
      produces: ['application/json'],
      response: { 200: sampleUserResponse(ALBERT, true), ...errorResponses(406) }
    }
  }, async (_request, reply) => {
    reply.header('x-an-int', A_NUMBER).header('x-a-bool', true)
    return ALBERT
  })
}

export default sampleUsers
