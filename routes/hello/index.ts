import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HelloMessageSchema, HelloQuerySchema } from '../../schemas/hello.js'
import { errorResponses } from '../../schemas/common.js'

/** GET /hello?name=: a greeting; without a name, for an anonymous coward. */
const hello: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'A greeting',
      description: '`?name=Alp` → `Hello, Alp`; no `name` → `Hello, anonymous coward`; `?name=` → `Hello, ` (an empty name is a name).',
      produces: ['application/json'],
      querystring: HelloQuerySchema,
      response: { 200: HelloMessageSchema, ...errorResponses(406) }
    }
  }, (request) => ({ msg: `Hello, ${request.query.name ?? 'anonymous coward'}` }))
}

export default hello
