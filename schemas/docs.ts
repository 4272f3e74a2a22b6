import { Type } from '@sinclair/typebox'

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

/** `GET /docs`: the description page, Markdown. */
export const DescriptionPageSchema = Type.String({ examples: [PAGE_EXAMPLE] })
