import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../schemas/common.js'

/** The start of a page, as an example: the page itself is too long to show. */
const PAGE_EXAMPLE = [
  '# servant-example-api',
  '',
  'The servant tutorial\'s example API on Fastify 5 and TypeScript. Version 1.0.0.',
  '',
  '## GET /a',
  '',
  '### Response:',
  '',
  '- Status code 200 (OK)'
].join('\n')

/** GET /docs: the API description page, generated at start-up (DECISIONS §6), whatever DOCS_CATCH_ALL says. */
const docs: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: 'This page: the description of the API in Markdown.',
      description: 'Generated at start-up from the schemas of the registered routes. When DOCS_CATCH_ALL ' +
        'is on (the default), every request that matches no route or no method gets it too.',
      produces: ['text/plain'],
      response: {
        200: Type.String({ examples: [PAGE_EXAMPLE] }),
        ...errorResponses(406)
      }
    }
  }, async () => fastify.apiDescription.markdown)
}

export default docs
