import fp from 'fastify-plugin'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { Ajv, type AnySchemaObject, type ErrorObject } from 'ajv'
import formats from 'ajv-formats'
import { ErrorSchema, addResponses } from '../schemas/common.js'

/**
 * Ajv never coerces: a JSON body must carry the declared types (`"25"` is not an integer).
 * Captures, query strings, headers and form fields are text on the wire, so they are first
 * decoded by the strict rules of DECISIONS §1 and then validated the same way.
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

type WireValue = string | string[] | undefined
type WireResult = { value: unknown } | { error: ErrorObject[] }
type Decoder = (raw: WireValue, path: string) => WireResult

const INTEGER = /^[+-]?\d+$/
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * An integer on the wire (DECISIONS §1): an optional sign and decimal digits, within the safe
 * range; anything else (`1.5`, `1e3`, `0x10`, ` 1`, the empty string) is undefined. `-0` is 0.
 */
export function parseWireInteger (text: string): number | undefined {
  const value = Number(text)
  return INTEGER.test(text) && Number.isSafeInteger(value) ? value + 0 : undefined
}

function wireError (path: string, type: string, message: string): { error: ErrorObject[] } {
  return {
    error: [{ instancePath: path, schemaPath: '#/type', keyword: 'type', params: { type }, message }]
  }
}

/** The scalar decoders, by JSON type. Anything else (strings, enums, unions) passes through as text. */
const scalarDecoders: Record<string, (text: string, path: string, schema: AnySchemaObject) => WireResult> = {
  integer (text, path, schema) {
    const value = parseWireInteger(text)
    if (value !== undefined) return { value }
    // The range said is the schema's own when it has one (bounds beyond it are checked after).
    const min = Math.max(schema.minimum ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER)
    const max = Math.min(schema.maximum ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
    return wireError(path, 'integer', `must be a decimal integer between ${min} and ${max}`)
  },
  number (text, path) {
    const value = Number(text)
    return NUMBER.test(text) && Number.isFinite(value) ? { value } : wireError(path, 'number', 'must be a decimal number')
  },
  boolean (text, path) {
    if (text === 'true') return { value: true }
    if (text === 'false') return { value: false }
    return wireError(path, 'boolean', 'must be true or false')
  }
}

function decoderFor (schema: AnySchemaObject): Decoder {
  if (schema.type === 'array') {
    const item = decoderFor(schema.items ?? {})
    return (raw, path) => {
      // A list parameter: every occurrence, in order; none is the empty list.
      const values = []
      for (const [index, text] of (raw === undefined ? [] : [raw].flat()).entries()) {
        const decoded = item(text, `${path}/${index}`)
        if ('error' in decoded) return decoded
        values.push(decoded.value)
      }
      return { value: values }
    }
  }
  const scalar = typeof schema.type === 'string' ? scalarDecoders[schema.type] : undefined
  return (raw, path) => {
    // A repeated single-valued parameter: the first occurrence wins.
    const text = Array.isArray(raw) ? raw[0] : raw
    return scalar === undefined || text === undefined ? { value: text } : scalar(text, path, schema)
  }
}

/**
 * Decodes the properties of an object schema from their text. Captures, query strings and form
 * fields are fresh objects per request and are decoded in place; headers are the raw request's,
 * so with `copy` a value that changes is written to a copy of them.
 */
function wireDecoder (schema: AnySchemaObject, copy: boolean) {
  // Each property with its decoder and the path an error names, made once per schema.
  const decoders = Object.entries<AnySchemaObject>(schema.properties ?? {})
    .map(([key, property]) => [key, `/${key}`, decoderFor(property)] as const)

  return function decodeWire (data: Record<string, WireValue> | null): WireResult {
    let decoded: Record<string, unknown> = data ?? {}
    for (const [key, path, decode] of decoders) {
      const raw = decoded[key] as WireValue
      const result = decode(raw, path)
      if ('error' in result) return result
      if (result.value === raw) continue
      if (copy && decoded === data) decoded = { ...data }
      decoded[key] = result.value
    }
    return { value: decoded }
  }
}

/** Marks a body parsed from a form: its fields are text on the wire, decoded like a query string. */
const FORM_FIELDS = Symbol('form fields')

export function formFields<T extends object> (fields: T): T {
  return Object.defineProperty(fields, FORM_FIELDS, { value: true })
}

function isFormFields (data: unknown): data is Record<string, WireValue> {
  return typeof data === 'object' && data !== null && FORM_FIELDS in data
}

/**
 * Header names are case-insensitive and node:http gives them in lower case: a headers schema may
 * declare `User-Agent`. (Fastify does this for its own compiler, not for a custom one.)
 */
function lowerCaseNames (schema: AnySchemaObject): AnySchemaObject {
  const properties = Object.entries<AnySchemaObject>(schema.properties ?? {})
  return {
    ...schema,
    properties: Object.fromEntries(properties.map(([name, property]) => [name.toLowerCase(), property])),
    ...(Array.isArray(schema.required) ? { required: schema.required.map((name: string) => name.toLowerCase()) } : {})
  }
}

/**
 * The validator of one part of a route's requests. It answers `true` when the part is valid as it
 * is (or was decoded in place) and `{ value }` only for a new object, since Fastify stores that
 * one as the part (for headers, over the raw ones, on every later read).
 */
function compile (fastify: FastifyInstance, declared: AnySchemaObject, httpPart: string | undefined) {
  const headers = httpPart === 'headers'
  const schema = headers ? lowerCaseNames(declared) : declared
  // Ajv's compile, on first use (plugins/compile-later.ts).
  const validator = fastify.compileLater(() => (headers ? headersAjv : ajv)().compile(schema))
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

/** Keywords that say something about a value without constraining it. */
const ANNOTATIONS = new Set(['type', 'description', 'examples', 'title', 'default'])

/** Whether a query string or headers schema can refuse a request: anything but optional, unconstrained strings. */
function canRefuse (schema: AnySchemaObject | undefined): boolean {
  if (schema === undefined) return false
  if ((schema.required ?? []).length > 0) return true
  return Object.values<AnySchemaObject>(schema.properties ?? {})
    .some((property) => property.type !== 'string' || Object.keys(property).some((key) => !ANNOTATIONS.has(key)))
}

/**
 * Whether a route can answer 400: a body to decode, a query string or header that can be refused,
 * or captures (the router refuses a capture whose percent-escapes are not UTF-8).
 */
export function canAnswerBadRequest (url: string, schema: FastifySchema | undefined): boolean {
  return /[:*]/.test(url) || schema?.body !== undefined ||
    canRefuse(schema?.querystring as AnySchemaObject | undefined) || canRefuse(schema?.headers as AnySchemaObject | undefined)
}

export default fp(async function validation (fastify) {
  fastify.setValidatorCompiler(({ schema, httpPart }) => compile(fastify, schema as AnySchemaObject, httpPart))
  fastify.addHook('onRoute', ({ url, schema }) => {
    if (canAnswerBadRequest(url, schema)) addResponses(schema, { 400: ErrorSchema })
    // The router refuses a capture longer than maxParamLength (FST_ERR_MAX_PARAM_LENGTH).
    if (url.includes(':')) addResponses(schema, { 414: ErrorSchema })
  })
}, { name: 'validation', dependencies: ['compile-later'] })
