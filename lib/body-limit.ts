import type { IncomingHttpHeaders } from 'node:http'

// A route's body limit follows from its body schema: the longest body that the schema can accept,
// written the longest way the wire allows, plus room for the rest. So a route never reads more than
// a valid body can need, and a bound is written once, in the schema (docs/operations.md, Limits).

/** The JSON-schema keywords the walk reads (TypeBox schemas are JSON schemas). */
export interface BoundedSchema {
  type?: string
  properties?: Record<string, BoundedSchema>
  items?: BoundedSchema
  anyOf?: BoundedSchema[]
  const?: unknown
  enum?: unknown[]
  maxLength?: number
  maxItems?: number
  minimum?: number
  maximum?: number
}

export const FORM = 'application/x-www-form-urlencoded'

/**
 * The most bytes one character of a string takes on the wire: a character outside the BMP is one
 * character to the schema (Ajv counts code points) and twelve bytes both in JSON, escaped as a
 * surrogate pair (`\ud83d\ude00`), and in a form, as four percent-encoded UTF-8 bytes.
 */
export const BYTES_PER_CHARACTER = 12
/** The most bytes a UTF-16 code unit of a known text (a key, a constant) takes: `\u0061` in JSON. */
const BYTES_PER_CODE_UNIT = 6
/** The longest a JSON number needs to be written (`-2.2250738585072014e-308`). */
const NUMBER_LENGTH = 24
/**
 * What a body may hold beyond the longest encoding of its fields: whitespace between the JSON
 * tokens, keys the schema does not name (ignored, docs/contract.md), a number written with
 * trailing zeros.
 */
export const BODY_SLACK = 1024

/** The longest text of a scalar (a string, an integer or number, a boolean, null, a constant); Infinity when unbounded. */
function longestScalar (schema: BoundedSchema): number {
  if (schema.const !== undefined) return longestConstant([schema.const])
  if (schema.enum !== undefined) return longestConstant(schema.enum)
  switch (schema.type) {
    case 'string': return 2 + (schema.maxLength ?? Infinity) * BYTES_PER_CHARACTER
    case 'integer':
      return schema.minimum === undefined || schema.maximum === undefined ? Infinity : Math.max(String(schema.minimum).length, String(schema.maximum).length)
    case 'number': return NUMBER_LENGTH
    case 'boolean': return 'false'.length
    case 'null': return 'null'.length
    default: return Infinity
  }
}

/** The longest JSON of one of these values, each of its characters escaped. */
function longestConstant (values: readonly unknown[]): number {
  return Math.max(...values.map((value) => typeof value === 'string' ? 2 + value.length * BYTES_PER_CODE_UNIT : JSON.stringify(value).length))
}

/**
 * The longest compact JSON of a value the schema accepts, every character written its longest way:
 * Infinity unless every string has a maxLength, every list a maxItems, every integer its bounds.
 */
export function longestJson (schema: BoundedSchema): number {
  if (schema.anyOf !== undefined) return Math.max(...schema.anyOf.map(longestJson))
  if (schema.type === 'object') {
    const fields = Object.entries(schema.properties ?? {})
    // `{` `}`, a comma between fields, each `"key":value`.
    return 2 + Math.max(0, fields.length - 1) +
      fields.reduce((sum, [key, field]) => sum + 3 + key.length * BYTES_PER_CODE_UNIT + longestJson(field), 0)
  }
  if (schema.type === 'array') {
    const items = schema.maxItems ?? Infinity
    return 2 + Math.max(0, items - 1) + items * longestJson(schema.items ?? {})
  }
  return longestScalar(schema)
}

/**
 * The longest form (`application/x-www-form-urlencoded`) of an object the schema accepts: a pair a
 * field, a pair a list element (docs/contract.md, Forms), every character percent-encoded.
 */
export function longestForm (schema: BoundedSchema): number {
  // A string's characters as UTF-8 bytes, any other value's ASCII text, each byte as `%XX`.
  const value = (field: BoundedSchema) => field.type === 'string'
    ? (field.maxLength ?? Infinity) * BYTES_PER_CHARACTER
    : longestScalar(field) * 3
  const pairs = Object.entries(schema.properties ?? {}).map(([key, field]) => {
    const name = key.length * 3 + 1
    return field.type === 'array'
      ? (field.maxItems ?? Infinity) * (name + value(field.items ?? {}) + 1)
      : name + value(field) + 1
  })
  // Each pair with its `&`, one too many.
  return pairs.reduce((sum, pair) => sum + pair, -1)
}

/**
 * The body limit of a route that reads a body of `schema` in the media types `consumes`: the
 * longest encoding of a valid body, plus BODY_SLACK, rounded up to a KiB; Infinity for a schema
 * with a string, a list or an integer of no bound.
 */
export function bodyLimitOf (schema: BoundedSchema, consumes: readonly string[] = ['application/json']): number {
  const longest = Math.max(longestJson(schema), consumes.includes(FORM) ? longestForm(schema) : 0)
  return Math.ceil((longest + BODY_SLACK) / 1024) * 1024
}

/** Whether a request carries a body (RFC 9112, 6.3): a Transfer-Encoding, or a Content-Length other than 0. */
export function carriesBody (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0)
}
