import { STATUS_CODES } from 'node:http'
import { contentTypeHeader, isJson } from '../media-types.js'

/** The parts of a JSON Schema (TypeBox schemas are JSON Schema) that the page reads. */
export interface Schema {
  type?: string | readonly string[]
  format?: string
  description?: string
  examples?: readonly unknown[]
  enum?: readonly unknown[]
  const?: unknown
  default?: unknown
  minimum?: number
  maximum?: number
  properties?: Readonly<Record<string, Schema>>
  required?: readonly string[]
  items?: Schema
  contentEncoding?: string
  anyOf?: readonly Schema[]
  oneOf?: readonly Schema[]
  /**
   * Response headers: an object schema whose properties are the headers, required when always
   * sent; or the @fastify/swagger convention, header name → schema.
   */
  headers?: Readonly<Record<string, Schema>> | Schema
  /** Titles of the `examples`, in order, as servant-docs' samples have them. */
  'x-example-titles'?: readonly string[]
  /** A response declared per media type: media type → `{ schema }`. */
  content?: Readonly<Record<string, { schema?: Schema }>>
}

/** One endpoint (a method and a path) as its route declares it. */
export interface RouteDescription {
  method: string
  /** Captures written `:name`, a wildcard `*`. */
  path: string
  summary?: string | undefined
  description?: string | undefined
  /** The object schema of the captures (`schema.params`). */
  captures?: Schema | undefined
  /** The object schema of the query string. */
  query?: Schema | undefined
  /** The object schema of the request headers the endpoint reads. */
  headers?: Schema | undefined
  body?: Schema | undefined
  /** A body the endpoint reads itself and may be absent (GET /b). */
  optionalBody?: Schema | undefined
  /** The most bytes a body may have (413 above). */
  bodyLimit?: number | undefined
  /** Request body media types; JSON when there is a body schema and no list. */
  consumes?: readonly string[] | undefined
  /** Response media types, the first being the default; JSON when absent. */
  produces?: readonly string[] | undefined
  /** Response schemas by status code. */
  responses?: Readonly<Record<string, Schema>> | undefined
  auth?: 'basic' | 'bearer' | undefined
  /** How a payload is written in a produced type other than JSON (e.g. a list as text lines). */
  serializers?: Readonly<Record<string, (payload: any) => string>> | undefined
}

/** What the introduction says about this server. */
export interface Introduction {
  title: string
  version: string
  /** What the API is, in a sentence. */
  about: string
  /** The realm of the HTTP Basic Authentication. */
  realm: string
  /** Whether bearer-protected endpoints need a token on this server (API_TOKENS is set, or production). */
  bearerRequired: boolean
  /** Whether requests that match no route or no method get this page (DOCS_CATCH_ALL). */
  catchAll: boolean
  /** An error body, to show its format. */
  errorExample: unknown
  /** The path prefix the reverse proxy serves the API under (BASE_PATH), '' for none. */
  basePath?: string
}

const NDJSON = 'application/x-ndjson'
const FORM = 'application/x-www-form-urlencoded'
const WIDTH = 100

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
/** A body of bytes (a file): its media type is the file's, not one the route can list. */
const isBinary = (schema: Schema | undefined) => schema?.format === 'binary' || schema?.contentEncoding === 'binary'
const compare = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``
const indent = (lines: readonly string[], by = '    ') => lines.map((line) => line === '' ? '' : by + line)

/** Endpoints by path in plain code-unit order, then by method. */
export function byPathThenMethod (a: RouteDescription, b: RouteDescription): number {
  return compare(a.path, b.path) || compare(a.method, b.method)
}

/** Words joined into lines of at most `width` characters; longer words and `code spans` stay whole. */
export function wrap (text: string, width = WIDTH): string {
  const lines: string[] = []
  let line = ''
  for (const [word] of text.matchAll(/(?:`[^`]*`|[^\s`])+|`/g)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  return [...lines, line].join('\n')
}

/**
 * A body in a fenced block, indented under its list item (or not, `by` ''): as plain text no line
 * of it can pass for a heading, and the fence is longer than any run of backticks inside.
 */
export function codeBlock (text: string, type?: string, by = '    '): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (run) => run[0].length))
  const fence = '`'.repeat(longest + 1)
  const language = type !== undefined && (isJson(type) || type === NDJSON) ? 'json' : ''
  return indent([fence + language, ...text.replace(/\n$/, '').split('\n'), fence], by).join('\n')
}

/** A form body for an example object: one key per field, one repeated key per list element. */
export function formBody (example: unknown): string | undefined {
  if (!isRecord(example)) return undefined
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries(example)) {
    for (const item of [value].flat()) form.append(key, typeof item === 'string' ? item : JSON.stringify(item))
  }
  return form.toString()
}

/** What a schema's values are, in words: `integer`, `string, date`, `list of string`. */
export function typeName (schema: Schema): string {
  if (schema.const !== undefined) return `the constant ${code(schema.const)}`
  const union = schema.anyOf ?? schema.oneOf
  if (union !== undefined) return union.map(typeName).join(' or ')
  const types = schema.type === undefined ? [] : [schema.type].flat()
  if (types.length === 0) return 'any JSON value'
  return types.map((type) => {
    if (type === 'array') return `list of ${schema.items === undefined ? 'any JSON value' : typeName(schema.items)}`
    if (type === 'string' && schema.format !== undefined) return `string, ${schema.format}`
    if (type === 'integer' || type === 'number') return type + bounds(schema)
    return type
  }).join(' or ')
}

function bounds ({ minimum, maximum }: Schema): string {
  // The bounds of every safe integer say nothing a reader needs.
  const min = minimum === undefined || minimum <= Number.MIN_SAFE_INTEGER ? undefined : minimum
  const max = maximum === undefined || maximum >= Number.MAX_SAFE_INTEGER ? undefined : maximum
  if (min !== undefined && max !== undefined) return `, from ${min} to ${max}`
  if (min !== undefined) return `, at least ${min}`
  if (max !== undefined) return `, at most ${max}`
  return ''
}

function allowedValues (schema: Schema): readonly unknown[] | undefined {
  const union = schema.anyOf ?? schema.oneOf
  if (union !== undefined && union.every((member) => member.const !== undefined)) return union.map((member) => member.const)
  return schema.enum ?? schema.items?.enum
}

/** A named value (capture, parameter, header): `- \`name\` (type, flags): description`, then details. */
function namedItem (name: string, schema: Schema, flags: readonly string[] = []): string[] {
  const head = `- ${code(name)} (${[typeName(schema), ...flags].join(', ')})`
  const details: string[] = []
  const allowed = allowedValues(schema)
  if (allowed !== undefined) details.push(`- Allowed values: ${allowed.map(code).join(', ')}`)
  if (schema.type === 'array') details.push('- A list: repeat the name once per value.')
  if (schema.default !== undefined) details.push(`- Default: ${code(schema.default)}`)
  if (schema.examples !== undefined && schema.examples.length > 0 && allowed === undefined) {
    details.push(`- Example${schema.examples.length > 1 ? 's' : ''}: ${schema.examples.map(code).join(', ')}`)
  }
  return [schema.description === undefined ? head : `${head}: ${schema.description}`, ...indent(details)]
}

/** The properties of an object schema as named items, with required/optional when asked. */
function namedItems (schema: Schema | undefined, withPresence: boolean): string[] {
  const required = new Set(schema?.required ?? [])
  return Object.entries(schema?.properties ?? {}).flatMap(([name, property]) =>
    namedItem(name, property, withPresence ? [required.has(name) ? 'required' : 'optional'] : []))
}

/** The names a path captures, in order: `:name` segments and a trailing wildcard `*`. */
export function captureNames (path: string): string[] {
  const names = Array.from(path.matchAll(/:([A-Za-z0-9_]+)/g), (match) => match[1] as string)
  return path.endsWith('*') ? [...names, '*'] : names
}

function capturesSection (route: RouteDescription): string | undefined {
  const declared = route.captures?.properties ?? {}
  const names = [...new Set([...captureNames(route.path), ...Object.keys(declared)])]
  if (names.length === 0) return undefined
  const items = names.flatMap((name) => namedItem(name, declared[name] ?? (name === '*'
    ? { type: 'string', description: 'the rest of the path, slashes included' }
    : { type: 'string' })))
  return ['### Captures:', '', ...items].join('\n')
}

function parametersSection (route: RouteDescription): string | undefined {
  const items = namedItems(route.query, true)
  return items.length === 0 ? undefined : [`### ${route.method} Parameters:`, '', ...items].join('\n')
}

/**
 * Example blocks for one example payload, one block per distinct rendering, naming its types;
 * titled as servant-docs titles its samples (`- When 'name' is not specified (...)`), else `Example`.
 */
function exampleBlocks (types: readonly string[], render: (type: string | undefined) => string | undefined, title = 'Example'): string[] {
  const byText = new Map<string, string[]>()
  for (const type of types) {
    const text = render(type)
    if (text !== undefined) byText.set(text, [...byText.get(text) ?? [], type])
  }
  // A body whose media type is not declared (a file) can still have an example.
  const untyped = types.length === 0 ? render(undefined) : undefined
  if (untyped !== undefined) byText.set(untyped, [])
  return Array.from(byText, ([text, sharing]) => sharing.length === 0
    ? `- ${title}:\n\n${codeBlock(text)}`
    : `- ${title} (${sharing.map(code).join(', ')}):\n\n${codeBlock(text, sharing[0])}`)
}

/** A list, then its example blocks, each separated by a blank line. */
const withBlocks = (lines: readonly string[], blocks: readonly string[]) =>
  [...(lines.length > 0 ? [lines.join('\n')] : []), ...blocks].join('\n\n')

function requestBody (type: string | undefined, example: unknown): string | undefined {
  if (type === undefined) return typeof example === 'string' ? example : undefined
  if (isJson(type)) return JSON.stringify(example, null, 2)
  if (type === FORM) return formBody(example)
  return typeof example === 'string' ? example : undefined
}

function authentication (route: RouteDescription, intro: Introduction): string | undefined {
  if (route.auth === 'basic') {
    return `- Authentication: HTTP Basic Authentication, realm ${code(intro.realm)} (401 without valid credentials)`
  }
  if (route.auth === 'bearer') {
    return intro.bearerRequired
      ? '- Authentication: `Authorization: Bearer <token>` with one of the server\'s API tokens (401 without one)'
      : '- Authentication: `Authorization: Bearer <token>` when the server has API tokens; this one has none, so none is needed'
  }
  return undefined
}

function requestSection (route: RouteDescription, intro: Introduction): string | undefined {
  const lines: string[] = []
  const auth = authentication(route, intro)
  if (auth !== undefined) lines.push(auth)
  const headers = namedItems(route.headers, true)
  if (headers.length > 0) lines.push('- Headers:', ...indent(headers))
  const consumes = route.consumes ?? (route.body === undefined ? [] : ['application/json'])
  const body = route.body ?? route.optionalBody
  if (consumes.length > 0) {
    lines.push('- Supported content types are:', ...indent(consumes.map((type) => `- ${code(type)}`)))
    if (route.body === undefined) lines.push(`- The body is optional${body === undefined ? '' : `: ${typeName(body)}`}.`)
  }
  if (body?.description !== undefined) lines.push(`- Body: ${body.description}`)
  if (body !== undefined && route.bodyLimit !== undefined) lines.push(`- At most ${route.bodyLimit} bytes: a longer body is refused (413).`)
  const blocks = titled(body).flatMap(([title, example]) =>
    exampleBlocks(consumes, (type) => requestBody(type, example), title))
  if (lines.length === 0 && blocks.length === 0) return undefined
  return `### Request:\n\n${withBlocks(lines, blocks)}`
}

/**
 * The error body of a status. The introduction's example (the shared error schema's) and examples
 * written for another status get this status, its reason phrase and a placeholder message.
 */
export function errorExample (status: number, example: unknown, generic: unknown): unknown {
  if (!isRecord(example) || typeof example.statusCode !== 'number') return example
  if (example !== generic && example.statusCode === status) return example
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message: '<what was wrong>' }
}

/** A response payload in a produced type: the route's serializer, JSON, or text as it is. */
function responseBody (route: RouteDescription, type: string | undefined, example: unknown, how: { streamed: boolean, error: boolean }): string | undefined {
  // A stream writes one JSON value per line, whatever type it is labelled with.
  if (how.streamed) return [example].flat().map((item) => JSON.stringify(item) + '\n').join('')
  if (type === undefined) return typeof example === 'string' ? example : undefined
  const serializer = route.serializers?.[type]
  if (serializer !== undefined && !how.error) {
    try {
      return serializer(example)
    } catch {
      return undefined
    }
  }
  // Error bodies are short: one line, as sent.
  if (isJson(type)) return how.error ? JSON.stringify(example) : JSON.stringify(example, null, 2)
  return typeof example === 'string' ? example : undefined
}

function statusLine (status: string, schema: Schema | undefined): string {
  const reason = STATUS_CODES[status]
  const line = `- Status code ${status}${reason === undefined ? '' : ` (${reason})`}`
  return schema?.description === undefined ? line : `${line}: ${schema.description}`
}

/** The examples of a schema with their titles (`Example` when untitled). */
function titled (schema: Schema | undefined): Array<[string, unknown]> {
  const titles = schema?.['x-example-titles'] ?? []
  return (schema?.examples ?? []).map((value, index) => [titles[index] ?? 'Example', value])
}

/** The headers of a response: `always sent` when its headers are an object schema that requires them. */
function responseHeaders (headers: Schema['headers']): string[] {
  if (headers === undefined) return []
  if (headers.type !== 'object' || headers.properties === undefined) {
    return Object.entries(headers as Record<string, Schema>).flatMap(([name, header]) => namedItem(name, header))
  }
  const required = new Set((headers as Schema).required ?? [])
  return Object.entries(headers.properties).flatMap(([name, header]) =>
    namedItem(name, header, [required.has(name) ? 'always sent' : 'optional']))
}

function statusBlock (route: RouteDescription, status: string, schema: Schema | undefined, intro: Introduction): string {
  const lines = [statusLine(status, schema)]
  const headers = responseHeaders(schema?.headers)
  if (headers.length > 0) lines.push('- Headers:', ...indent(headers))
  if (schema?.type === 'null' || status === '204' || status === '304') {
    lines.push('- No body.')
    return lines.join('\n')
  }
  const numeric = Number(status)
  const error = numeric >= 400
  // Errors are JSON whatever the endpoint produces, unless the route declares their media types.
  const content = schema?.content
  const types = content !== undefined
    ? Object.keys(content)
    : error ? ['application/json'] : route.produces ?? (schema === undefined || isBinary(schema) ? [] : ['application/json'])
  if (types.length > 0) lines.push('- Supported content types are:', ...indent(types.map((type) => `- ${code(contentTypeHeader(type))}`)))
  const how = { streamed: types.includes(NDJSON), error }
  const example = (value: unknown) => error ? errorExample(numeric, value, intro.errorExample) : value
  const blocks = content !== undefined
    ? types.flatMap((type) => (content[type]?.schema?.examples ?? []).flatMap((value) =>
      exampleBlocks([type], () => responseBody(route, type, example(value), how))))
    : titled(schema).flatMap(([title, value]) =>
      exampleBlocks(types, (type) => responseBody(route, type, example(value), how), title))
  return withBlocks(lines, blocks)
}

/** Status codes in numeric order; ranges (`2xx`) and `default` after them. */
function byStatus (a: string, b: string): number {
  const [x, y] = [Number(a), Number(b)]
  if (Number.isInteger(x) && Number.isInteger(y)) return x - y
  if (Number.isInteger(x) !== Number.isInteger(y)) return Number.isInteger(x) ? -1 : 1
  return compare(a, b)
}

function responseSection (route: RouteDescription, intro: Introduction): string {
  const responses = route.responses ?? {}
  const statuses = Object.keys(responses).sort(byStatus)
  const blocks = statuses.length === 0
    ? [statusBlock(route, '200', undefined, intro)]
    : statuses.map((status) => statusBlock(route, status, responses[status], intro))
  return `### Response:\n\n${blocks.join('\n\n')}`
}

/** One `## METHOD /path` section; every sub-section but Response is left out when it has nothing to say. */
export function renderEndpoint (route: RouteDescription, intro: Introduction): string {
  const about = [route.summary, route.description]
    .filter((text): text is string => text !== undefined && text.trim() !== '')
    .filter((text, index, all) => all.indexOf(text) === index)
    .map((text) => wrap(text))
  return [
    `## ${route.method} ${route.path}`,
    ...about,
    capturesSection(route),
    parametersSection(route),
    requestSection(route, intro),
    responseSection(route, intro)
  ].filter((part) => part !== undefined).join('\n\n')
}

/** The `# Title` and the paragraphs every reader needs before the endpoints. */
export function renderIntroduction (intro: Introduction): string {
  const basePath = intro.basePath ?? ''
  const paragraphs = [
    `${intro.about} Version ${intro.version}.`,
    ...(basePath === ''
      ? []
      : [`This server is reached under the path prefix ${code(basePath)}: every path below is relative to it ` +
        `(\`GET /hello\` is \`GET ${basePath}/hello\`); the \`Location\` headers it answers with include it.`]),
    'This page is generated at start-up from the schemas of the registered routes: one section ' +
      '`## <METHOD> <path>` per endpoint, sorted by path, then method, with its captures (written ' +
      '`:name` in the path), query parameters, request and responses. `/static/*` is the static-file ' +
      'area. `HEAD` is answered for every `GET`. The same schemas give an OpenAPI 3 document at ' +
      `\`${basePath}/openapi.json\`, which \`${basePath}/documentation\` lets you browse and try out.`,
    'Errors are JSON (`application/json; charset=utf-8`) of this shape, where `message` says what was ' +
      'wrong, naming the capture, parameter, header or field, and `code` is there when there is one:',
    codeBlock(JSON.stringify(intro.errorExample, null, 2), 'application/json', ''),
    'A path that matches no endpoint is answered with 404, a path that exists for other methods with 405 ' +
      'and an `Allow` header' + (intro.catchAll
      ? '; on this server both get this page instead (200, `text/plain; charset=utf-8`).'
      : '.'),
    'Content negotiation: each endpoint lists the content types of its responses, the first being the ' +
      'default. The `Accept` header picks one (q-values are honoured; no `Accept`, or `*/*`, means the ' +
      'first); when it admits none of them, the answer is 406. A request body must come in one of the ' +
      'endpoint\'s request content types, named by `Content-Type`, without a `Content-Encoding` ' +
      '(other than `identity`), else 415. A capture, query ' +
      'parameter, header or body that cannot be decoded to its type gets 400, a body over the size ' +
      'limit 413. Integers on the wire are an optional sign and decimal digits.',
    'Authentication: endpoints whose Request names HTTP Basic Authentication need `Authorization: Basic ...` ' +
      `with a user and password of the realm ${code(intro.realm)}; without valid credentials they answer 401 ` +
      `with \`WWW-Authenticate: Basic realm="${intro.realm}"\`. Endpoints whose Request names a bearer token ` +
      'need `Authorization: Bearer <token>` when the server is configured with API tokens' +
      (intro.bearerRequired ? ', as this one is.' : '; this one is not, so the header is ignored.')
  ]
  return [`# ${intro.title}`, ...paragraphs.map((text) => text.startsWith('```') ? text : wrap(text))].join('\n\n')
}

/** The whole page: the introduction, then every endpoint by path and method. */
export function renderDescription (routes: readonly RouteDescription[], intro: Introduction): string {
  const endpoints = [...routes].sort(byPathThenMethod).map((route) => renderEndpoint(route, intro))
  return [renderIntroduction(intro), ...endpoints].join('\n\n') + '\n'
}
