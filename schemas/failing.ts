import { Type } from '@sinclair/typebox'

/** The body of every answer of `GET /failing`. */
export const FAILING_TEXT = 'Sorry dear user.'

/** `GET /failing`'s 503: plain text, declared per media type. */
export const FailingResponse = {
  description: 'The handler failed on purpose.',
  content: { 'text/plain': { schema: Type.String({ examples: [FAILING_TEXT] }) } }
}
