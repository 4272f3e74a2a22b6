import { STATUS_CODES } from 'node:http'
import { Type, type SchemaOptions, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { StoreUnavailable, TooManyFailures, UnsupportedContentEncoding } from '../lib/error-codes.js'

/**
 * A string limited to a list of values, as a plain JSON-schema `enum`: validation errors then
 * carry the allowed values, which the error messages list.
 */
export function StringEnum<T extends string> (values: readonly T[], options: SchemaOptions = {}) {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] })
}

/** The body of every error the service produces (docs/contract.md, Errors), Fastify's own shape. */
export const ErrorSchema = Type.Object({
  statusCode: Type.Integer(),
  code: Type.Optional(Type.String()),
  error: Type.String(),
  message: Type.String()
}, {
  $id: 'Error',
  examples: [{
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    error: 'Bad Request',
    message: 'querystring/sortby must be one of: age, name'
  }]
})

export type ErrorBody = Static<typeof ErrorSchema>

/** The body the service answers with for one of its own errors: an example for the document. */
function exampleBody (error: Error & { code: string, statusCode?: number }): ErrorBody {
  const statusCode = error.statusCode ?? 500
  return { statusCode, code: error.code, error: STATUS_CODES[statusCode] ?? 'Error', message: error.message }
}

/** `response` entries for the error statuses a route can answer with, e.g. `...errorResponses(400, 404)`. */
export function errorResponses<const S extends number> (...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, ErrorSchema])) as Record<S, typeof ErrorSchema>
}

/** Where documentOnly() keeps the keywords that only the OpenAPI document shows. */
export const DOCUMENT_ONLY = Symbol('keywords of the document only')

/**
 * A schema with keywords that the OpenAPI document shows (lib/openapi.ts adds them) and request
 * validation does not see. For a value whose refusal is the route's own, with its own code and
 * a message that says more than Ajv's `must match pattern` (a Range, docs/contract.md,
 * Pagination by Range), or a value the route must not refuse at all (a preference it does not
 * know, which RFC 7240 has a server ignore): the document says what works, the route keeps its
 * answers. They are kept under a symbol: Ajv reads only string keys (and refuses keywords it does
 * not know), and TypeBox copies symbols with the schema.
 */
export function documentOnly<T extends TSchema> (schema: T, keywords: Readonly<Record<string, unknown>>): T {
  return { ...schema, [DOCUMENT_ONLY]: keywords }
}

/** The keywords documentOnly() gave a schema, if any. */
export function documentOnlyKeywords (schema: object): Readonly<Record<string, unknown>> | undefined {
  return (schema as { [DOCUMENT_ONLY]?: Readonly<Record<string, unknown>> })[DOCUMENT_ONLY]
}

/** An integer that is safe in JavaScript and in 64-bit storage (docs/contract.md, Values on the wire). */
export function SafeInteger (options: SchemaOptions = {}) {
  return Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options })
}

/** The longest name (of a user, a marketing client, a product), in characters. */
export const NAME_MAX_LENGTH = 256

/** The longest e-mail address, in characters: RFC 5321's path of 256 octets, less its angle brackets. */
export const EMAIL_MAX_LENGTH = 254

/**
 * A string of at most `maxLength` characters (docs/operations.md, Limits), the bound said in its
 * description too: the generated client's types show descriptions, not `maxLength`.
 */
export function BoundedString (maxLength: number, options: SchemaOptions = {}) {
  const bound = `At most ${maxLength} characters.`
  return Type.String({ ...options, maxLength, description: options.description === undefined ? bound : `${options.description} ${bound}` })
}

/** A name: at most NAME_MAX_LENGTH characters. */
export const Name = (options: SchemaOptions = {}) => BoundedString(NAME_MAX_LENGTH, options)

/** An e-mail address, as text (the service does not check its form): at most EMAIL_MAX_LENGTH characters. */
export const EmailAddress = (options: SchemaOptions = {}) => BoundedString(EMAIL_MAX_LENGTH, options)

/**
 * Examples with titles, as servant-docs' `toSamples` gives them ("When a value is provided for
 * 'name'"): `examples` holds the values, `x-example-titles` their titles, in the same order. The
 * description page and the OpenAPI document show the titles.
 */
export function titledExamples<T> (samples: ReadonlyArray<readonly [title: string, value: T]>) {
  return { examples: samples.map(([, value]) => value), 'x-example-titles': samples.map(([title]) => title) }
}

/**
 * A response of a named schema that comes with headers: an object schema whose properties are the
 * headers, required when they are always sent. The body stays the named schema (the OpenAPI
 * document refers to it by its `$id`); `options` are this response's own description and examples.
 */
export function withHeaders<T extends TSchema> (schema: T, headers: TObject, options: { description?: string, examples?: unknown[] } = {}): T {
  const response = { ...schema, ...options, headers }
  variants.set(response, schema)
  return response
}

/** The named schemas that responses of withHeaders() and describedError() are variants of. */
const variants = new WeakMap<object, TSchema>()

/** An error answered for a reason of its own: the Error body, with this response's description and `error` as its example. */
export function describedError (error: Error & { code: string, statusCode?: number }, description: string): typeof ErrorSchema {
  const response = { ...ErrorSchema, description, examples: [exampleBody(error)] }
  variants.set(response, ErrorSchema)
  return response
}

/** The named schema (one with an `$id`) that a schema is, or is a variant of; undefined for others. */
export function namedSchemaOf (schema: object): TSchema | undefined {
  const named = variants.get(schema) ?? schema
  return typeof (named as { $id?: unknown }).$id === 'string' ? named as TSchema : undefined
}

/**
 * Adds the responses a plugin answers on a route (406 from content negotiation, 401 from
 * authentication…) to its schema, unless the route declares them itself: a route's schema then
 * lists every status it can answer, for the description page, the OpenAPI document and the
 * serializer. The response map is replaced, not changed: routes may share one.
 */
export function addResponses (schema: { response?: unknown } | undefined, responses: Readonly<Record<number, unknown>>): void {
  if (schema === undefined) return
  const declared = (schema.response ?? {}) as Record<string, unknown>
  const missing = Object.entries(responses).filter(([status]) => declared[status] === undefined)
  if (missing.length > 0) schema.response = { ...declared, ...Object.fromEntries(missing) }
}

/**
 * The 415 of an endpoint that reads a body: a `Content-Type` it does not read, or a
 * `Content-Encoding` other than identity, which it names in `Accept-Encoding` (RFC 9110, section
 * 15.5.16; docs/contract.md, Errors).
 */
export const UnsupportedMediaTypeResponse = withHeaders(ErrorSchema, Type.Object({
  'Accept-Encoding': Type.Optional(Type.Literal('identity', { description: 'Sent when the body came with a Content-Encoding: the only coding this endpoint reads is none' }))
}), {
  description: `${STATUS_CODES[415]}: the body's \`Content-Type\` is not one this endpoint reads, or the body comes with a ` +
    '`Content-Encoding` other than `identity` (bodies are read as they are sent, never decompressed). Nothing of the body is read.',
  examples: [exampleBody(new UnsupportedContentEncoding('gzip'))]
})

/** A refusal that says when to try again: the error, and `Retry-After` in seconds. */
function retryAfterResponse (example: ErrorBody, retryAfter: number, description: string) {
  return withHeaders(ErrorSchema, Type.Object({
    'Retry-After': Type.Integer({ minimum: 0, description: 'Seconds to wait before trying again', examples: [retryAfter] })
  }), { description, examples: [example] })
}

/**
 * The 503 of a service that cannot serve the request now and says when to try again: its database
 * is unavailable, or it is overloaded.
 */
export const UnavailableResponse = retryAfterResponse(
  exampleBody(new StoreUnavailable()),
  5, 'The database is unavailable, the service is overloaded, or it cannot count more failed logins: try again after Retry-After seconds')

/**
 * The 429 of a client over a limit per address: a rate limit, the failed logins, or the streams
 * it has open (STREAMS_PER_CLIENT, on the streamed routes). Retry-After says when it may try again.
 */
export const TooManyResponse = retryAfterResponse(
  exampleBody(new TooManyFailures(840)),
  60, 'Too many requests, failed authentications or open streams from this address: try again after Retry-After seconds')
