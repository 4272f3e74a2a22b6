import fp from 'fastify-plugin'
import { errorCodes, type FastifyInstance } from 'fastify'
import { parse as parseJson } from 'secure-json-parse'
import { Ajv, type AnySchemaObject } from 'ajv'
import formats from 'ajv-formats'
import { canAnswerBadRequest, forbiddenKey, isFormFields, lowerCaseNames, wireDecoder, type WireValue } from '../lib/wire.js'
import { ErrorSchema, addResponses } from '../schemas/common.js'
import { ForbiddenKey } from '../lib/error-codes.js'

/**
 * Ajv never coerces: a JSON body must carry the declared types (`"25"` is not an integer).
 * Captures, query strings, headers and form fields are text on the wire, so they are first
 * decoded by the strict rules of lib/wire.ts and then validated the same way.
 */
const strict = { coerceTypes: false, useDefaults: true, allErrors: false } as const
/** An Ajv with the formats, made when the first schema is compiled (after listen: see compile-later). */
function lazyAjv (options: ConstructorParameters<typeof Ajv>[0]): () => Ajv {
  let ajv: Ajv | undefined
  return () => (ajv ??= formats.default(new Ajv(options)))
}
/** Bodies, captures, query strings: unknown keys are removed and never reach a handler. */
const ajv = lazyAjv({ ...strict, removeAdditional: 'all' })
/** Headers are the request's own: the ones a route does not declare stay, and there are no defaults. */
const headersAjv = lazyAjv({ ...strict, removeAdditional: false, useDefaults: false })

/**
 * The validator of one part of a route's requests. It answers `true` when the part is valid as it
 * is (or was decoded in place) and `{ value }` only for a new object, since Fastify stores that
 * one as the part (for headers, over the raw ones, on every later read).
 */
function compile (fastify: FastifyInstance, declared: AnySchemaObject, httpPart: string | undefined, route: string) {
  const headers = httpPart === 'headers'
  const schema = headers ? lowerCaseNames(declared) : declared
  // Ajv's compile, on first use (plugins/compile-later.ts).
  const validator = fastify.compileLater(() => (headers ? headersAjv : ajv)().compile(schema), `${route}: the ${httpPart ?? 'request'}`)
  const decode = wireDecoder(schema, headers)
  const check = (original: unknown, value: unknown) => {
    const validate = validator()
    if (!validate(value)) return { error: validate.errors ?? [] }
    return value === original ? true : { value }
  }
  const checkDecoded = (data: Record<string, WireValue> | null) => {
    const decoded = decode(data)
    return 'error' in decoded ? decoded : check(data, decoded.value)
  }
  // A JSON body is validated as it is; form fields, captures, query strings and headers are decoded first.
  return httpPart === 'body'
    ? (data: unknown) => isFormFields(data) ? checkDecoded(data) : check(data, data)
    : checkDecoded
}

const { FST_ERR_CTP_EMPTY_JSON_BODY, FST_ERR_CTP_INVALID_JSON_BODY } = errorCodes

/**
 * JSON bodies as Fastify parses them (secure-json-parse: `__proto__`, and `constructor` holding a
 * `prototype`, are refused), the refused key named in the 400 rather than "not valid JSON".
 */
function parseJsonBody (_request: unknown, body: string, done: (err: Error | null, value?: unknown) => void): void {
  if (body === '') return done(new FST_ERR_CTP_EMPTY_JSON_BODY())
  try {
    done(null, parseJson(body))
  } catch (err) {
    const key = (err as Error).message === 'Object contains forbidden prototype property' ? forbiddenKey(JSON.parse(body)) : undefined
    done(key === undefined ? new FST_ERR_CTP_INVALID_JSON_BODY() : new ForbiddenKey(key))
  }
}

export default fp(async function validation (fastify) {
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody)
  fastify.setValidatorCompiler(({ schema, httpPart, method, url }) => compile(fastify, schema as AnySchemaObject, httpPart, `${method} ${url}`))
  fastify.addHook('onRoute', ({ url, schema }) => {
    if (canAnswerBadRequest(url, schema)) addResponses(schema, { 400: ErrorSchema })
    // The router refuses a capture longer than maxParamLength (FST_ERR_MAX_PARAM_LENGTH).
    if (url.includes(':')) addResponses(schema, { 414: ErrorSchema })
  })
}, { name: 'validation', dependencies: ['compile-later'] })
