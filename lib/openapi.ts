import { STATUS_CODES } from 'node:http'
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import type { RouteOptions } from 'fastify'
import { ErrorSchema, documentOnlyKeywords, namedSchemaOf } from '../schemas/common.js'
import { errorExample, type Schema } from './description/render.js'
import { isJson } from './media-types.js'

const NDJSON = 'application/x-ndjson'
const FORM = 'application/x-www-form-urlencoded'
/** Marks a response header that is always sent, until the document is finished (see finish()). */
const REQUIRED_HEADER = 'x-required'

export type Json = Record<string, unknown>

/** A response schema as routes declare it: a JSON schema with, optionally, headers and a body per media type. */
interface ResponseSchema extends Schema {
  $id?: string
  'x-example-titles'?: readonly string[]
}

const isBinary = (schema: Schema) => schema.format === 'binary' || schema.contentEncoding === 'binary'

/**
 * The media type object of one example list: `example` for one, titled `examples` for several
 * (servant-docs' titles when the schema has them, `x-example-titles`).
 */
function withExamples (media: Json, values: readonly unknown[], titles: readonly string[] = []): Json {
  if (values.length === 0) return media
  if (values.length === 1 && titles[0] === undefined) return { ...media, example: values[0] }
  const examples = Object.fromEntries(values.map((value, index) => {
    const summary = titles[index] ?? `Example ${index + 1}`
    const key = summary.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
    return [key, { summary, value }]
  }))
  return { ...media, examples }
}

/** The keywords whose values are schemas (the others hold data: examples, enum, const, default…). */
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'not', 'x-itemSchema', 'contains', 'propertyNames'])
const SUBSCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems'])

/**
 * A schema with every named schema in it (an `$id`) replaced by a `$ref` to its component, which
 * is added to `components` (once: each named schema has one definition).
 */
export function referenced (schema: Schema, components: Map<string, Json>): Json {
  const named = namedSchemaOf(schema)
  if (named !== undefined) {
    const id = named.$id as string
    if (!components.has(id)) {
      components.set(id, {})
      const { $id, ...definition } = subschemasReferenced(named as Json, components)
      components.set(id, definition)
    }
    return { $ref: `#/components/schemas/${id}` }
  }
  return subschemasReferenced(schema as Json, components)
}

function subschemasReferenced (schema: Json, components: Map<string, Json>): Json {
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => {
    if (typeof value !== 'object' || value === null) return [key, value]
    if (SUBSCHEMA.has(key) && !Array.isArray(value)) return [key, referenced(value as Schema, components)]
    if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) return [key, value.map((item) => referenced(item, components))]
    if ((key === 'properties' || key === '$defs') && !Array.isArray(value)) {
      return [key, Object.fromEntries(Object.entries(value).map(([name, item]) => [name, referenced(item, components)]))]
    }
    return [key, value]
  }))
}

/** A schema without the annotations that belong to one response (its headers, examples, description). */
function bodySchema (schema: ResponseSchema): Schema {
  const named = namedSchemaOf(schema)
  if (named !== undefined) return named
  const { headers, examples, description, 'x-example-titles': titles, ...body } = schema
  return body
}

/**
 * The headers of a response as @fastify/swagger takes them (name → schema). Declared as an object
 * schema, the required ones are always sent: they are marked, and finish() makes them `required`.
 */
function responseHeaders (headers: Schema['headers'] | Schema | undefined): Record<string, Json> | undefined {
  if (headers === undefined) return undefined
  if (headers.type !== 'object' || headers.properties === undefined) return headers as Record<string, Json>
  const required = new Set((headers as Schema).required ?? [])
  return Object.fromEntries(Object.entries(headers.properties).map(([name, schema]) =>
    [name, required.has(name) ? { ...schema, [REQUIRED_HEADER]: true } : schema]))
}

/** How a route writes its bodies: what it produces, with which serializers, and whether it streams. */
interface Writer {
  produces: readonly string[] | undefined
  serializers: Readonly<Record<string, ((payload: any) => string) | 'schema'>>
  /** A schema as the document writes it, named schemas as `$ref`s (see referenced()). */
  ref: (schema: Schema) => Json
}

/**
 * One media type of a success response, as it is on the wire: JSON as the schema says, a stream
 * (NDJSON, whatever it is labelled) as text lines of items (`x-itemSchema`: OpenAPI 3.2's
 * `itemSchema`, which the 3.1 tools do not read yet), bytes as binary, anything else a serializer
 * writes (text, HTML, a form) as text, its example written by that serializer.
 */
function successMedia (type: string, schema: ResponseSchema, writer: Writer, streamed: boolean): Json {
  const values = schema.examples ?? []
  const titles = schema['x-example-titles']
  const body = bodySchema(schema)
  if (streamed) {
    const lines = values.map((value) => [value].flat().map((item) => JSON.stringify(item) + '\n').join(''))
    const text = { type: 'string', description: 'Newline-delimited JSON: one item per line, each line ending in `\\n`.' }
    // Labelled JSON (as servant does), one line is also one JSON value: a parser reading it as JSON gets an item.
    return withExamples({
      schema: isJson(type) ? { anyOf: [text, writer.ref(body)] } : text,
      'x-itemSchema': writer.ref(body)
    }, lines, titles)
  }
  if (isJson(type)) return withExamples({ schema: writer.ref(body) }, values, titles)
  const serializer = writer.serializers[type]
  const form = type === FORM ? formFields(body) : undefined
  if (form !== undefined && typeof serializer === 'function') {
    // The example as the form's fields, each a list of its values.
    const decoded = values.map((value) => {
      const fields: Record<string, string[]> = {}
      for (const [key, text] of new URLSearchParams(serializer(value))) (fields[key] ??= []).push(text)
      return fields
    })
    return withExamples(form, decoded, titles)
  }
  const write = serializer === undefined || serializer === 'schema' ? JSON.stringify : serializer
  const text = values.map((value) => typeof value === 'string' && serializer === undefined ? value : write(value))
  const binary = type === 'application/octet-stream' || type === '*/*' || isBinary(schema)
  return withExamples({ schema: binary ? { type: 'string', format: 'binary' } : { type: 'string' } }, text, titles)
}

/**
 * A form written from a list of objects (GET /users as application/x-www-form-urlencoded): every
 * field a repeated key, one per item, in field order; its values are text.
 */
function formFields (schema: Schema): Json | undefined {
  const item = schema.type === 'array' && schema.items !== undefined ? namedSchemaOf(schema.items) ?? schema.items : undefined
  const fields = Object.keys(item?.properties ?? {})
  if (fields.length === 0) return undefined
  return {
    schema: {
      type: 'object',
      description: 'One repeated key per field, one occurrence per item, in order.',
      properties: Object.fromEntries(fields.map((name) => [name, { type: 'array', items: { type: 'string' } }]))
    },
    // URLSearchParams leaves `*` as it is: a reserved character.
    encoding: Object.fromEntries(fields.map((name) => [name, { style: 'form', explode: true, allowReserved: true }]))
  }
}

/**
 * A response as the document shows it, status by status and media type by media type: errors as
 * the JSON error body (whatever the endpoint produces) with an example of their own status; no
 * body for 204, 304 and `type: 'null'`; success bodies as successMedia() says; responses that
 * declare their `content` as they are. Always sent headers are required.
 */
function documentedResponse (status: string, schema: ResponseSchema, writer: Writer): Json {
  const description = schema.description ?? STATUS_CODES[status] ?? 'Response'
  const headers = responseHeaders(schema.headers)
  const response: Json = { description, ...(headers === undefined ? {} : { headers }) }
  if (schema.content !== undefined) {
    return {
      ...response,
      content: Object.fromEntries(Object.entries(schema.content).map(([type, media]) => {
        const { examples, ...body } = media.schema ?? {}
        return [type, withExamples({ schema: writer.ref(body) }, examples ?? [])]
      }))
    }
  }
  if (schema.type === 'null' || status === '204' || status === '304') return { ...response, type: 'null' }
  const code = Number(status)
  if (code >= 400) {
    const example = errorExample(code, schema.examples?.[0], ErrorSchema.examples[0])
    return { ...response, content: { 'application/json': { schema: writer.ref(bodySchema(schema)), example } } }
  }
  // A route that lists no media types and answers bytes (a file) may answer any type.
  const types = writer.produces ?? (isBinary(schema) ? ['*/*'] : ['application/json'])
  const streamed = types.includes(NDJSON)
  return {
    ...response,
    content: Object.fromEntries(types.map((type) => [type, successMedia(type, schema, writer, streamed)]))
  }
}

/**
 * The request body of a route: JSON as its schema says; a form with one key per field and a
 * repeated key per list element (`encoding`), where a list may be absent (the empty list); a body
 * a route reads itself (`optionalBody`, e.g. GET /b) is optional. Its size bound (the route's
 * `bodyLimit`, plugins/config.ts) in its description and as `x-body-limit`.
 */
function requestBody (schema: NonNullable<RouteOptions['schema']>, bodyLimit: number | undefined, ref: Writer['ref']): Json | undefined {
  const body = (schema.body ?? schema.optionalBody) as Schema | undefined
  if (body === undefined) return undefined
  const consumes = schema.consumes ?? ['application/json']
  const content = Object.fromEntries(consumes.map((type) => {
    if (type !== FORM) return [type, withExamples({ schema: ref(body) }, body.examples ?? [])]
    const lists = Object.entries(body.properties ?? {}).filter(([, property]) => property.type === 'array').map(([name]) => name)
    const { $id, examples, ...fields } = body as ResponseSchema
    return [type, {
      schema: ref({ ...fields, required: (body.required ?? []).filter((name) => !lists.includes(name)) }),
      encoding: Object.fromEntries(lists.map((name) => [name, { style: 'form', explode: true }])),
      ...(examples?.[0] === undefined ? {} : { example: examples[0] })
    }]
  }))
  // The size bound has no keyword of its own in OpenAPI: said in words, and as the route's option.
  const limit = bodyLimit === undefined ? undefined : `At most ${bodyLimit} bytes: a longer body is refused (413).`
  const description = [body.description, limit].filter((text) => text !== undefined).join(' ')
  return {
    required: schema.body !== undefined,
    ...(description === '' ? {} : { description }),
    ...(bodyLimit === undefined ? {} : { 'x-body-limit': bodyLimit }),
    content
  }
}

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)
/** `list-all` → `ListAll`, `myfile.txt` → `MyfileTxt`. */
const pascal = (segment: string) => segment.split(/[^A-Za-z0-9]+/).filter(Boolean).map(capitalize).join('')

/**
 * The operation name a client author would choose: the method and the path's fixed segments
 * (`getPosition`, `postMarketing`, `getUsersListAll`); an operation on an item of a listed
 * collection ends in `ById` (`putUsersById`). A route's own `schema.operationId` wins.
 */
export function operationName (method: string, url: string, paths: ReadonlySet<string>): string {
  const segments = url.split('/').filter(Boolean)
  const fixed = segments.filter((segment) => !/^[:*{]/.test(segment))
  const trailingCaptures = segments.length - 1 - segments.findLastIndex((segment) => !/^[:*{]/.test(segment))
  const collection = '/' + fixed.join('/')
  const item = trailingCaptures > 0 && paths.has(collection)
  return method.toLowerCase() + fixed.map(pascal).join('') + (item ? 'ById' : '')
}

/** The tag of an endpoint group: the first segment of its paths. */
export const groupOf = (url: string) => url.split('/').find((segment) => segment !== '') ?? 'root'

/** `/static/*` as the document writes it: the wildcard is a named path parameter. */
const WILDCARD = 'path'
export const documentPath = (url: string) => url.replace(/\*$/, `{${WILDCARD}}`)

/** The routes' captures schema with the wildcard named `path`, as in the document's path. */
function namedParams (params: Schema | undefined): Schema | undefined {
  const wildcard = params?.properties?.['*']
  if (params === undefined || wildcard === undefined) return params
  const { '*': _, ...named } = params.properties!
  return { ...params, properties: { ...named, [WILDCARD]: wildcard }, required: [...(params.required ?? []).filter((name) => name !== '*'), WILDCARD] }
}

/**
 * The schema of the captures, the query or the headers, each property with the keywords it has
 * for the document only (schemas/common.ts, documentOnly()): the `pattern` of a Range, the `enum`
 * of a Prefer. They are added here, where the document is written, and nowhere else: were they
 * in the schema Ajv validates, a Range the grammar refuses would be Ajv's 400 (FST_ERR_VALIDATION,
 * `must match pattern "…"`) instead of the grammar's own code and the message that says what is
 * wrong, and a preference RFC 7240 has the server ignore would be refused.
 */
function documentedPart (schema: Schema | undefined): Schema | undefined {
  if (schema?.properties === undefined) return schema
  const properties = Object.entries(schema.properties).map(([name, property]) => [name, { ...property, ...documentOnlyKeywords(property) }])
  return { ...schema, properties: Object.fromEntries(properties) }
}

/** A 414 that says which bound it is over: a capture's length, which no schema of the route holds. */
function uriTooLong (response: ResponseSchema, { maxParamLength }: RequestBounds): ResponseSchema {
  if (maxParamLength === undefined) return response
  return { ...response, description: `${STATUS_CODES[414]}: a capture is longer than ${maxParamLength} characters` }
}

/** What bounds a request before its schema is read, for the document to say. */
export interface RequestBounds {
  /** The most characters a capture may have (the router's `maxParamLength`): 414 above. */
  maxParamLength?: number | undefined
}

/**
 * Per route: the operation's name, tag and security (`[]` for public operations, basic, bearer
 * when the server requires tokens), its captures, query and headers with the keywords of the
 * document only, its request body, and its responses as documentedResponse() says (the 414 with
 * the capture bound).
 */
export function documentRoute (bearerRequired: boolean, paths: ReadonlySet<string>, components: Map<string, Json>, bounds: RequestBounds): SwaggerTransform {
  const ref = (schema: Schema) => referenced(schema, components)
  return ({ schema, url, route }) => {
    if (schema === undefined) return { schema, url }
    const auth = route.config?.auth
    const security = auth === 'basic' ? [{ basicAuth: [] }] : auth === 'bearer' && bearerRequired ? [{ bearerAuth: [] }] : []
    const responses = (schema.response ?? {}) as Record<string, ResponseSchema>
    const writer: Writer = { produces: schema.produces, serializers: route.config?.serializers ?? {}, ref }
    const method = [route.method].flat().find((name) => name !== 'HEAD') as string
    const { body, optionalBody, consumes, ...rest } = schema
    const params = documentedPart(namedParams(schema.params as Schema | undefined))
    const querystring = documentedPart(schema.querystring as Schema | undefined)
    const headers = documentedPart(schema.headers as Schema | undefined)
    return {
      url: documentPath(url),
      schema: {
        ...rest,
        operationId: schema.operationId ?? operationName(method, url, paths),
        tags: schema.tags ?? [groupOf(url)],
        security,
        ...(params === undefined ? {} : { params }),
        ...(querystring === undefined ? {} : { querystring }),
        ...(headers === undefined ? {} : { headers }),
        response: Object.fromEntries(Object.entries(responses).map(([status, response]) =>
          [status, documentedResponse(status, status === '414' ? uriTooLong(response, bounds) : response, writer)])),
        // requestBody is set in finish(): @fastify/swagger would put one schema on every media type.
        'x-request-body': requestBody(schema, route.bodyLimit, ref)
      }
    }
  }
}

type OpenApiDocumentObject = Extract<Parameters<SwaggerTransformObject>[0], { openapiObject: unknown }>

/** Deletes a keyword at every depth of a JSON value (annotations the document has no place for). */
function deleteKeyword (node: unknown, keyword: string): void {
  if (typeof node !== 'object' || node === null) return
  if (!Array.isArray(node)) delete (node as Json)[keyword]
  for (const child of Object.values(node)) deleteKeyword(child, keyword)
}

/**
 * Finishes the document: HEAD is answered for every GET, so like the description page the
 * document lists GET only; request bodies and required headers take their place; a tag per
 * endpoint group; annotations of our own schemas (example titles) are removed.
 */
export const finish = (components: ReadonlyMap<string, Json>): SwaggerTransformObject => (document) => {
  const { openapiObject } = document as OpenApiDocumentObject
  openapiObject.components = {
    ...openapiObject.components,
    schemas: Object.fromEntries([...components].sort(([a], [b]) => a < b ? -1 : 1))
  }
  const groups = new Set<string>()
  for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
    delete item?.head
    for (const operation of Object.values(item ?? {}) as Json[]) {
      const body = operation['x-request-body']
      delete operation['x-request-body']
      if (body !== undefined) operation.requestBody = body
      for (const tag of (operation.tags ?? []) as string[]) groups.add(tag)
      for (const response of Object.values((operation.responses ?? {}) as Record<string, Json>)) {
        for (const header of Object.values((response.headers ?? {}) as Record<string, { schema: Json, required?: boolean }>)) {
          if (header.schema[REQUIRED_HEADER] === true) header.required = true
          delete header.schema[REQUIRED_HEADER]
        }
      }
    }
    if (path.includes('{*}')) throw new Error(`${path}: a wildcard must be a named parameter`)
  }
  openapiObject.tags = [...groups].sort().map((name) => ({ name, description: `The endpoints of \`/${name}\`${name.includes('.') ? '' : ' and the paths under it'}.` }))
  deleteKeyword(openapiObject, 'x-example-titles')
  return openapiObject
}
