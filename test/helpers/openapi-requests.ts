import fc from 'fast-check'

/**
 * Requests generated from an OpenAPI 3.1 document's own parameter and body schemas, valid and
 * invalid, as Schemathesis generates them: for check 4b (test/openapi/properties.test.ts) and for
 * replaying the same traffic through a proxy (Prism). Each request says whether the document
 * calls it valid: every part drawn from what the document allows (a parameter from its schema,
 * `pattern`, `enum` and bounds included, or from its examples; a body from its schema, in a
 * documented type and within `x-body-limit`; an `Accept` the operation answers; the right
 * credentials), or at least one part drawn from anything.
 */

type Schema = {
  $ref?: string
  type?: string
  format?: string
  enum?: readonly unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  minItems?: number
  maxItems?: number
  properties?: Record<string, Schema>
  required?: readonly string[]
  items?: Schema
  anyOf?: readonly Schema[]
  oneOf?: readonly Schema[]
  examples?: readonly unknown[]
}
interface Parameter { in: 'path' | 'query' | 'header', name: string, required?: boolean, schema: Schema, example?: unknown, examples?: Record<string, { value: unknown }> }
interface Media { schema?: Schema, example?: unknown, encoding?: Record<string, unknown> }
export interface Operation {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean, content: Record<string, Media>, 'x-body-limit'?: number }
  responses: Record<string, { content?: Record<string, unknown> }>
  security?: Array<Record<string, unknown>>
}
export interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

export interface GeneratedRequest {
  method: string
  /** Path and query string, percent-encoded. */
  url: string
  headers: Record<string, string>
  body?: string
  /** Every part is one the document allows; false when one was drawn from anything (it may still be valid by chance). */
  valid: boolean
}

/** A generated part of a request, and whether it was drawn from what the document allows. */
interface Part<T> { value: T, valid: boolean }
const allowed = <T>(value: T): Part<T> => ({ value, valid: true })
const anything = <T>(value: T): Part<T> => ({ value, valid: false })

export interface Credentials {
  /** `user:password` pairs the server accepts. */
  basic: string
  /** A bearer token the server accepts. */
  bearer: string
}

/** What a test may narrow: the largest value of a parameter, where the contract's is too slow to stream in a test. */
export type Limits = Record<string, number>

/** Printable ASCII: what a header value and most test strings are made of. */
const PRINTABLE = /^[\x20-\x7e]*$/
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 24 })
/** Text of any code points, for bodies and query strings (percent-encoded on the way). */
const text = fc.string({ unit: 'grapheme', maxLength: 24 })
/** Integers on the wire that are not decimal integers, or not safe ones (docs/contract.md, Values on the wire). */
const badIntegers = fc.constantFrom('', '1.5', '1e3', '0x10', ' 1', '+', '-', 'abc', '99999999999999999999', '١٢')
const dates = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10))

export function requestGenerator (document: Document, credentials: Credentials, limits: Limits = {}) {
  const resolve = (schema: Schema): Schema => {
    if (schema.$ref === undefined) return schema
    const name = schema.$ref.replace('#/components/schemas/', '')
    return document.components.schemas[name] as Schema
  }

  /** Values the schema accepts. */
  function valid (schema: Schema, limit?: number): fc.Arbitrary<unknown> {
    const s = resolve(schema)
    if (s.const !== undefined) return fc.constant(s.const)
    if (s.enum !== undefined) return fc.constantFrom(...s.enum)
    const union = s.anyOf ?? s.oneOf
    if (union !== undefined) return fc.oneof(...union.map((member) => valid(member)))
    switch (s.type) {
      case 'integer': {
        const max = Math.min(s.maximum ?? Number.MAX_SAFE_INTEGER, limit ?? Number.MAX_SAFE_INTEGER)
        return fc.integer({ min: Math.max(s.minimum ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER), max })
      }
      case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true })
      case 'boolean': return fc.boolean()
      case 'string': return validString(s, text)
      case 'array': return fc.array(valid(s.items ?? {}), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) })
      case 'object': {
        const properties = Object.fromEntries(Object.entries(s.properties ?? {}).map(([name, property]) => [name, valid(property)]))
        return fc.record(properties, { requiredKeys: [...(s.required ?? [])] })
      }
      default: return fc.jsonValue()
    }
  }

  /**
   * Strings the schema accepts, from `strings` when it says nothing of their form: its `pattern`
   * (fast-check's stringMatching, with the `u` flag JSON Schema's regular expressions have), its
   * date format, its length bounds (in code points, as JSON Schema counts).
   */
  function validString (s: Schema, strings: fc.Arbitrary<string>): fc.Arbitrary<string> {
    const base = s.pattern !== undefined ? fc.stringMatching(new RegExp(s.pattern, 'u')) : s.format === 'date' ? dates : strings
    if (s.minLength === undefined && s.maxLength === undefined) return base
    return base.filter((value) => [...value].length >= (s.minLength ?? 0) && [...value].length <= (s.maxLength ?? Infinity))
  }

  /** Values the schema may refuse: any JSON, or a valid value with one field missing or of another type. */
  function invalid (schema: Schema): fc.Arbitrary<unknown> {
    const s = resolve(schema)
    const mutated = s.type === 'object' && s.properties !== undefined
      ? fc.tuple(valid(s), fc.constantFrom(...Object.keys(s.properties)), fc.oneof(fc.constant(undefined), fc.jsonValue()))
        .map(([value, key, replacement]) => ({ ...(value as object), [key]: replacement }))
      : fc.jsonValue()
    return fc.oneof(mutated, fc.jsonValue())
  }

  /**
   * A parameter's value as text on the wire: one the schema allows (a string from its pattern or
   * enum when it has one), one of its examples, or any text.
   */
  function wire (parameter: Parameter, limit?: number): fc.Arbitrary<Part<string>> {
    const schema = resolve(parameter.schema)
    const examples = [parameter.example, ...Object.values(parameter.examples ?? {}).map((example) => example.value), ...(schema.examples ?? [])]
      .filter((value) => value !== undefined).map(String)
    // Header values are printable ASCII (HTTP clients refuse anything else).
    const header = parameter.in === 'header'
    const strings = header ? printable : text
    const good = schema.type === 'string' && schema.enum === undefined
      ? validString(schema, strings).filter((value) => !header || PRINTABLE.test(value))
      : valid(schema, limit).map((value) => String(value))
    const bad = schema.type === 'integer' ? fc.oneof(badIntegers, strings) : strings
    return fc.oneof(
      { weight: 3, arbitrary: good.map(allowed) },
      ...(examples.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...examples).map(allowed) }] : []),
      { weight: 1, arbitrary: bad.map(anything) }
    )
  }

  /** A path capture: one segment, or (the static area's file path, any text) several. */
  const capture = (parameter: Parameter, limit?: number): fc.Arbitrary<Part<string>> => parameter.name === 'path'
    ? fc.oneof(fc.constantFrom('hello.txt', 'missing.txt', '.hidden', 'a/b/c.txt'),
      // Dot segments are resolved by URL parsers before they leave the client: not generated.
      fc.array(printable.filter((segment) => !['', '.', '..'].includes(segment)), { minLength: 1, maxLength: 3 }).map((segments) => segments.map(encodeURIComponent).join('/')))
      .map(allowed)
    : wire(parameter, limit).filter(({ value }) => value !== '' && value !== '.' && value !== '..').map(({ value, valid }) => ({ value: encodeURIComponent(value), valid }))

  /** An optional parameter may be left out; a required one sometimes too (an invalid request). */
  const maybe = (arbitrary: fc.Arbitrary<Part<string>>, required: boolean): fc.Arbitrary<Part<string | undefined>> =>
    fc.option(arbitrary, { nil: undefined, freq: required ? 20 : 3 }).map((part) => part ?? { value: undefined, valid: !required })

  function form (value: unknown): string {
    const params = new URLSearchParams()
    for (const [key, field] of Object.entries(typeof value === 'object' && value !== null ? value : { value })) {
      for (const item of [field].flat()) params.append(key, typeof item === 'string' ? item : JSON.stringify(item))
    }
    return params.toString()
  }

  /**
   * A body and its Content-Type: valid or not, in a documented type or another, or none. A body
   * of its schema is allowed within the operation's `x-body-limit`.
   */
  function body (requestBody: NonNullable<Operation['requestBody']>): fc.Arbitrary<Part<{ type?: string, body?: string }>> {
    const limit = requestBody['x-body-limit'] ?? Infinity
    const bodies = Object.entries(requestBody.content).map(([type, media]) => {
      const write = (value: unknown) => type === 'application/x-www-form-urlencoded' ? form(value) : JSON.stringify(value)
      return fc.oneof(
        { weight: 3, arbitrary: valid(media.schema ?? {}).map((value) => ({ value: { type, body: write(value) }, valid: Buffer.byteLength(write(value)) <= limit })) },
        { weight: 1, arbitrary: invalid(media.schema ?? {}).map((value) => anything({ type, body: write(value) })) }
      )
    })
    return fc.oneof(
      { weight: 8, arbitrary: fc.oneof(...bodies) },
      { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('text/plain', 'application/xml', 'application/json'), body: printable }).map(anything) },
      { weight: 1, arbitrary: fc.constant({ value: {}, valid: requestBody.required !== true }) },
      // Over the test server's BODY_LIMIT: 413.
      { weight: 1, arbitrary: fc.constant(anything({ type: Object.keys(requestBody.content)[0], body: JSON.stringify('x'.repeat(5000)) })) }
    )
  }

  /**
   * Accept: a documented type, any, several with q-values, or one the operation does not produce.
   * Allowed when absent, `*\/*`, or when it takes a type the operation's successes are written in;
   * without a success body, a type all its bodies are written in (the errors' JSON of a DELETE,
   * none for GET /failing, whose only answer is text and its errors JSON).
   */
  function accept (operation: Operation): fc.Arbitrary<Part<string | undefined>> {
    const responses = Object.entries(operation.responses).map(([status, response]) => [status, Object.keys(response.content ?? {})] as const)
    const produced = [...new Set(responses.flatMap(([, types]) => types))]
    const successes = [...new Set(responses.filter(([status]) => status.startsWith('2')).flatMap(([, types]) => types))]
    const answered = successes.length > 0
      ? successes
      : produced.filter((type) => responses.every(([, types]) => types.length === 0 || types.includes(type)))
    return fc.option(fc.oneof(
      fc.constantFrom(...produced, '*/*', 'application/*'),
      fc.constantFrom('text/html', 'image/png', 'application/xml;q=0.9, text/plain;q=0.1', 'text/*'),
      fc.subarray(produced, { minLength: 1 }).map((types) => types.map((type, index) => `${type};q=${(1 - index / 10).toFixed(1)}`).join(', '))
    ), { nil: undefined, freq: 3 }).map((header) => ({ value: header, valid: header === undefined || accepts(header, answered) }))
  }

  /** Credentials for the operation's security: the right ones, wrong ones, or none. */
  function authorization (operation: Operation): fc.Arbitrary<Part<string | undefined>> {
    const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))
    if (schemes.length === 0) return fc.constant(allowed(undefined))
    const [user, ...password] = (credentials.basic.split(',')[0] as string).split(':')
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString('base64')}`
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant(allowed(schemes.includes('basicAuth') ? basic(`${user}:${password.join(':')}`) : `Bearer ${credentials.bearer}`)) },
      { weight: 1, arbitrary: fc.constantFrom(undefined, basic('nobody:wrong'), 'Bearer wrong-token', 'Basic !!', 'Digest x').map(anything) }
    )
  }

  /** The generated requests of one operation. */
  return function requestsOf (method: string, path: string): fc.Arbitrary<GeneratedRequest> {
    const operation = document.paths[path]?.[method] as Operation
    const parameters = operation.parameters ?? []
    const limit = (name: string) => limits[`${operation.operationId}.${name}`]
    const captures = Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, capture(p, limit(p.name))]))
    const query = Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, maybe(wire(p, limit(p.name)), p.required === true)]))
    const headers = Object.fromEntries(parameters.filter((p) => p.in === 'header').map((p) => [p.name, maybe(wire(p), p.required === true)]))
    return fc.record({
      captures: fc.record(captures),
      query: fc.record(query),
      headers: fc.record(headers),
      accept: accept(operation),
      authorization: authorization(operation),
      body: operation.requestBody === undefined ? fc.constant(allowed<{ type?: string, body?: string }>({})) : body(operation.requestBody)
    }).map(({ captures, query, headers, accept, authorization, body }) => {
      const parts = [...Object.values(captures), ...Object.values(query), ...Object.values(headers), accept, authorization, body]
      const given = (named: Record<string, Part<string | undefined>>) =>
        Object.entries(named).flatMap(([name, { value }]) => value === undefined ? [] : [[name, value] as const])
      const search = given(query).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
      const all: Record<string, string> = Object.fromEntries(given(headers))
      if (accept.value !== undefined) all.accept = accept.value
      if (authorization.value !== undefined) all.authorization = authorization.value
      if (body.value.type !== undefined) all['content-type'] = body.value.type
      return {
        method: method.toUpperCase(),
        url: path.replace(/\{([^}]+)\}/g, (_match, name: string) => (captures[name] as Part<string>).value) + (search === '' ? '' : `?${search}`),
        headers: all,
        ...(body.value.body === undefined ? {} : { body: body.value.body }),
        valid: parts.every((part) => part.valid)
      }
    })
  }
}

/** A media range matches a type: itself, or `type/*`; a type documented as `*\/*` is any. */
function matches (range: string, type: string): boolean {
  return type === '*/*' || range === type || (range.endsWith('/*') && type.startsWith(range.slice(0, -1)))
}

/** Whether an Accept header takes any type, or one of these (a media range of q=0 takes none). */
export function accepts (header: string, types: readonly string[]): boolean {
  return header.split(',').some((entry) => {
    const [range = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase())
    const q = parameters.find((parameter) => parameter.startsWith('q='))
    return (q === undefined || Number(q.slice(2)) > 0) && (range === '*/*' || types.some((type) => matches(range, type)))
  })
}
