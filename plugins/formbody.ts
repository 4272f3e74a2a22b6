import { parse } from 'node:querystring'
import formbody, { type FastifyFormbodyOptions } from '@fastify/formbody'
import { formFields } from '../lib/wire.js'

/**
 * `application/x-www-form-urlencoded` bodies, for the routes that list it in `schema.consumes`.
 * The fields stay text; validation decodes them like a query string (`clientAge=25` → 25,
 * a repeated key → a list).
 */
export const autoConfig: FastifyFormbodyOptions = {
  parser: (body) => formFields(parse(body))
}

export default formbody
