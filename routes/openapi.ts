import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/common.js'
import { OpenApiDocumentSchema } from '../schemas/openapi.js'
import { PREPARED_ENCODINGS, PreparedBody, type PreparedEncoding } from '../lib/prepared-body.js'

/**
 * GET /openapi.json: the OpenAPI document of plugins/openapi.ts; /documentation: Swagger UI over
 * the same document, its assets served from the package (it works offline).
 */
const openapi: FastifyPluginAsyncTypebox = async (fastify) => {
  let document: PreparedBody | undefined
  const { COMPRESSION } = fastify.config

  fastify.get('/openapi.json', {
    // The document is compressed once (lib/prepared-body.ts), not by @fastify/compress at every request.
    compress: false,
    schema: {
      summary: 'The OpenAPI 3 document of this API.',
      description: 'Generated from the same schemas as the description page; browse it at /documentation.',
      produces: ['application/json'],
      response: {
        200: OpenApiDocumentSchema,
        ...errorResponses(406)
      }
    }
  }, (request, reply) => {
    // Built on the first request (the routes are all known by then), then kept as bytes: a
    // megabyte and more, which every request used to write anew (and compress, for most clients).
    document ??= new PreparedBody(JSON.stringify(fastify.swagger()))
    if (!COMPRESSION) return document.identity
    reply.header('vary', 'accept-encoding')
    const encoding = request.accepts().encoding([...PREPARED_ENCODINGS, 'identity'])
    if (encoding === false || encoding === 'identity') return document.identity
    reply.header('content-encoding', encoding)
    // A promise only while the coding is being made, for the first requests that ask for it.
    return document.encoded(encoding as PreparedEncoding)
  })

  // One route serves the document. Swagger UI asks for it at ./json beside its page: that request
  // is sent on to /openapi.json (301, under BASE_PATH behind a proxy that strips it), and the same
  // document as YAML at ./yaml is not served (404).
  const { BASE_PATH } = fastify.config
  fastify.addHook('onRoute', (route) => {
    if (route.url === '/documentation/json') route.handler = async (_request, reply) => reply.redirect(`${BASE_PATH}/openapi.json`, 301)
    if (route.url === '/documentation/yaml') route.handler = async (_request, reply) => reply.callNotFound()
  })

  // Behind a proxy that strips BASE_PATH, the page links its assets under that prefix.
  await fastify.register(swaggerUi, { routePrefix: '/documentation', indexPrefix: BASE_PATH })
}

export default openapi
