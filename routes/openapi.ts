import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/common.js'
import { OpenApiDocumentSchema } from '../schemas/openapi.js'

/**
 * GET /openapi.json: the OpenAPI document of plugins/openapi.ts; /documentation: Swagger UI over
 * the same document, its assets served from the package (it works offline).
 */
const openapi: FastifyPluginAsyncTypebox = async (fastify) => {
  let document: string | undefined

  fastify.get('/openapi.json', {
    schema: {
      summary: 'The OpenAPI 3 document of this API.',
      description: 'Generated from the same schemas as the description page; browse it at /documentation.',
      produces: ['application/json'],
      response: {
        200: OpenApiDocumentSchema,
        ...errorResponses(406)
      }
    }
  }, async () => {
    // Built on the first request (the routes are all known by then), then kept as text.
    document ??= JSON.stringify(fastify.swagger())
    return document
  })

  // Behind a proxy that strips BASE_PATH, the page links its assets under that prefix; the
  // document's URL it resolves against its own address, which already carries it.
  await fastify.register(swaggerUi, { routePrefix: '/documentation', indexPrefix: fastify.config.BASE_PATH })
}

export default openapi
