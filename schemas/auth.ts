import { Type } from '@sinclair/typebox'
import type { FastifyError } from 'fastify'
import { errorBody } from '../lib/errors.js'
import { ErrorSchema, withHeaders } from './common.js'

/** The 401 response of a route whose credentials are enforced: the error, and the challenge it always sends. */
export function unauthorizedResponse (challenge: string, error: FastifyError) {
  return withHeaders(ErrorSchema, Type.Object({
    'WWW-Authenticate': Type.Literal(challenge, { description: 'The credentials to send' })
  }), {
    description: `Missing, malformed or wrong credentials (${challenge.split(' ', 1)[0]})`,
    examples: [errorBody(401, error.message, error.code)]
  })
}
