import createError from '@fastify/error'
import { errorCodes } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { BBodySchema, BSchema } from '../../schemas/counters.js'
import { errorResponses } from '../../schemas/common.js'
import { readRawBody } from './raw-body.js'

const { FST_ERR_CTP_INVALID_JSON_BODY } = errorCodes
const NotANumber = createError('FST_ERR_VALIDATION', 'body must be a JSON number, not %s', 400)

/** What a JSON value is, for an error message. */
function kindOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/**
 * GET /b: `"hi"` without a body, `true` with a JSON number body. Fastify does not parse bodies of
 * GET requests, so the route reads its own; the negotiation plugin has already refused a body in
 * another type, or one without a Content-Type (415).
 */
const b: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      summary: '"hi", or true for a JSON number body',
      description: 'No body (or an empty one) → `"hi"`; a JSON number body → `true`; any other JSON, or invalid JSON, → 400.',
      produces: ['application/json'],
      consumes: ['application/json'],
      optionalBody: BBodySchema,
      response: { 200: BSchema, ...errorResponses(400, 406, 413, 415) }
    }
  }, async (request, reply) => {
    const body = await readRawBody(request.raw, request.routeOptions.bodyLimit)
    // Fastify sends a string payload as it is: serialize it, to send the JSON string "hi".
    if (body.length === 0) return reply.serializer(JSON.stringify).send('hi')
    let value: unknown
    try {
      value = JSON.parse(body.toString('utf8'))
    } catch {
      throw new FST_ERR_CTP_INVALID_JSON_BODY()
    }
    if (typeof value !== 'number') throw new NotANumber(kindOf(value))
    return true as const
  })
}

export default b
