import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PERSONS, PersonsSchema } from '../../schemas/person.js'
import { errorResponses } from '../../schemas/common.js'
import { renderPersonsTable } from './table.js'

/** GET /persons: the persons as JSON, or as an HTML table for `Accept: text/html`. */
const persons: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    // Answers of about a hundred bytes (JSON or the table), far below the compression threshold (1 kB): no compression hooks.
    compress: false,
    schema: {
      summary: 'The persons, as JSON or an HTML table',
      description: 'JSON by default; `Accept: text/html` → one `<table>`, a header row then a row per person.',
      produces: ['application/json', 'text/html'],
      response: { 200: PersonsSchema, ...errorResponses(406) }
    },
    config: { serializers: { 'text/html': renderPersonsTable } }
  }, () => PERSONS)
}

export default persons
