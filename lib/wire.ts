import { parse } from 'node:querystring'
import type { FastifySchema } from 'fastify'
import type { AnySchemaObject, ErrorObject } from 'ajv'

// Values on the wire (docs/contract.md, "Values on the wire"): captures, query strings, headers and
// form fields are text, decoded by strict rules before they are validated like JSON.

export type WireValue = string | string[] | undefined
export type WireResult = { value: unknown } | { error: ErrorObject[] }
type Decoder = (raw: WireValue, path: string) => WireResult

const INTEGER = /^[+-]?\d+$/
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * An integer on the wire: an optional sign and decimal digits, within the safe
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
export function wireDecoder (schema: AnySchemaObject, copy: boolean) {
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

export function isFormFields (data: unknown): data is Record<string, WireValue> {
  return typeof data === 'object' && data !== null && FORM_FIELDS in data
}

/**
 * An `application/x-www-form-urlencoded` body as its fields, every pair of it: node:querystring
 * keeps the first 1,000 pairs by default and drops the rest without a word. The body is at most
 * BODY_LIMIT bytes (413 above), and the parse is linear in its length.
 */
export function parseForm (body: string): Record<string, WireValue> {
  return formFields(parse(body, '&', '=', { maxKeys: 0 }))
}

/**
 * Header names are case-insensitive and node:http gives them in lower case: a headers schema may
 * declare `User-Agent`. (Fastify does this for its own compiler, not for a custom one.)
 */
export function lowerCaseNames (schema: AnySchemaObject): AnySchemaObject {
  const properties = Object.entries<AnySchemaObject>(schema.properties ?? {})
  return {
    ...schema,
    properties: Object.fromEntries(properties.map(([name, property]) => [name.toLowerCase(), property])),
    ...(Array.isArray(schema.required) ? { required: schema.required.map((name: string) => name.toLowerCase()) } : {})
  }
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

/**
 * Where a parsed JSON body holds a key that could poison a prototype: an own `__proto__`, or a
 * `constructor` that holds a `prototype` (as secure-json-parse refuses them): `body/user/__proto__`.
 * Undefined when there is none.
 */
export function forbiddenKey (value: unknown, at = 'body'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (Object.hasOwn(value, '__proto__')) return `${at}/__proto__`
  const constructor = (value as Record<string, unknown>).constructor
  if (Object.hasOwn(value, 'constructor') && typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype')) {
    return `${at}/constructor/prototype`
  }
  for (const [key, child] of Object.entries(value)) {
    const found = forbiddenKey(child, `${at}/${key}`)
    if (found !== undefined) return found
  }
  return undefined
}
