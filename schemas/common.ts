import { Type, type SchemaOptions, type Static } from '@sinclair/typebox'

/**
 * A string limited to a list of values, as a plain JSON-schema `enum`: validation errors then
 * carry the allowed values, which the error messages list.
 */
export function StringEnum<T extends string> (values: readonly T[], options: SchemaOptions = {}) {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] })
}

/** The body of every error the service produces (DECISIONS §1), Fastify's own shape. */
export const ErrorSchema = Type.Object({
  statusCode: Type.Integer(),
  code: Type.Optional(Type.String()),
  error: Type.String(),
  message: Type.String()
}, {
  examples: [{
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    error: 'Bad Request',
    message: 'querystring/sortby must be one of: age, name'
  }]
})

export type ErrorBody = Static<typeof ErrorSchema>

/** `response` entries for the error statuses a route can answer with, e.g. `...errorResponses(400, 404)`. */
export function errorResponses<const S extends number> (...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, ErrorSchema])) as Record<S, typeof ErrorSchema>
}

/** An integer that is safe in JavaScript and in 64-bit storage (DECISIONS §1). */
export function SafeInteger (options: SchemaOptions = {}) {
  return Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options })
}
