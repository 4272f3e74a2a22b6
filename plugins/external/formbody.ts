import formbody, { type FastifyFormbodyOptions } from '@fastify/formbody'
import { parseForm } from '../../lib/wire.js'

/**
 * `application/x-www-form-urlencoded` bodies, for the routes that list it in `schema.consumes`:
 * read whole up to the route's body limit (413 above), every pair kept. The fields stay text;
 * validation decodes them like a query string (`clientAge=25` → 25, a repeated key → a list).
 */
export const autoConfig: FastifyFormbodyOptions = { parser: parseForm }

export default formbody
