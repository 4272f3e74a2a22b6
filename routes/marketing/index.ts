import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ClientInfoSchema, EmailSchema } from '../../schemas/marketing.js'
import { errorResponses } from '../../schemas/common.js'
import { marketingEmail } from './email.js'

/** POST /marketing: a ClientInfo, as JSON or a form, in; the marketing Email out. */
const marketing: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/', {
    schema: {
      summary: 'The marketing e-mail for a client',
      description: 'All four fields are required. In a form, `clientInterestedIn` is one repeated key per ' +
        'element (none: the empty list) and `clientAge` a decimal integer.',
      produces: ['application/json'],
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      body: ClientInfoSchema,
      response: { 200: EmailSchema, ...errorResponses(400, 406, 413, 415) }
    }
  }, (request) => marketingEmail(request.body))
}

export default marketing
