import fp from 'fastify-plugin'
import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv'
import formats from 'ajv-formats'

/**
 * One Ajv for every part of a request, and it never coerces: a JSON body must carry the declared
 * types (`"25"` is not an integer). Captures, query strings and headers are text on the wire,
 * so they are first decoded by the strict rules of DECISIONS §1 and then validated the same way.
 * Unknown keys are removed rather than refused, and never reach a handler.
 */
const ajv = new Ajv({
  coerceTypes: false,
  useDefaults: true,
  removeAdditional: 'all',
  allErrors: false
})
formats.default(ajv)

type WireValue = string | string[] | undefined
type WireResult = { value: unknown } | { error: ErrorObject[] }
type Decoder = (raw: WireValue, path: string) => WireResult

const INTEGER = /^[+-]?\d+$/
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

function wireError (path: string, type: string, message: string): { error: ErrorObject[] } {
  return {
    error: [{ instancePath: path, schemaPath: '#/type', keyword: 'type', params: { type }, message }]
  }
}

/** The scalar decoders, by JSON type. Anything else (strings, enums, unions) passes through as text. */
const scalarDecoders: Record<string, (text: string, path: string) => WireResult> = {
  integer (text, path) {
    const value = Number(text)
    return INTEGER.test(text) && Number.isSafeInteger(value)
      ? { value }
      : wireError(path, 'integer', `must be a decimal integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`)
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
      if (raw === undefined) return { value: raw }
      const values = []
      for (const [index, text] of (Array.isArray(raw) ? raw : [raw]).entries()) {
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
    return scalar === undefined || text === undefined ? { value: text } : scalar(text, path)
  }
}

/**
 * Wraps a validator of an object schema (params, querystring, headers) with the decoding of its
 * properties from text. The request part is replaced by the decoded copy.
 */
function wireValidator (schema: AnySchemaObject, validate: ValidateFunction) {
  const decoders = Object.entries<AnySchemaObject>(schema.properties ?? {})
    .map(([key, property]) => [key, decoderFor(property)] as const)

  return function validateWire (data: Record<string, WireValue> | null) {
    const decoded: Record<string, unknown> = { ...data }
    for (const [key, decode] of decoders) {
      const result = decode(decoded[key] as WireValue, `/${key}`)
      if ('error' in result) return result
      if (result.value !== undefined) decoded[key] = result.value
    }
    return validate(decoded) ? { value: decoded } : { error: validate.errors ?? [] }
  }
}

export default fp(async function validation (fastify) {
  fastify.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = ajv.compile(schema as AnySchemaObject)
    return httpPart === 'body' ? validate : wireValidator(schema as AnySchemaObject, validate)
  })
}, { name: 'validation' })
