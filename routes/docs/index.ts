import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../schemas/common.js'
import { DescriptionPageSchema } from '../../schemas/docs.js'

/** GET /docs: the API description page, generated at start-up (docs/contract.md, The description page), whatever DOCS_CATCH_ALL says. */
const docs: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'This page: the description of the API in Markdown.',
      description: 'Generated at start-up from the schemas of the registered routes. When DOCS_CATCH_ALL ' +
        'is on (the default), every request that matches no route or no method gets it too.',
      produces: ['text/plain'],
      response: {
        200: DescriptionPageSchema,
        ...errorResponses(406)
      }
    }
  }, () => fastify.apiDescription.markdown)
}

export default docs
