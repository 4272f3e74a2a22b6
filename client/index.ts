import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { components, paths } from './schema.js'
import { operations } from './operations.js'

// What a user copies: this folder, and openapi-fetch. Nothing here needs Node: it runs in browsers too.

export type { components, paths } from './schema.js'

type Schemas = components['schemas']
export type User = Schemas['User']
export type Color = Schemas['Color']
export type Position = Schemas['Position']
export type HelloMessage = Schemas['HelloMessage']
export type ClientInfo = Schemas['ClientInfo']
export type Email = Schemas['Email']
export type Person = Schemas['Person']
export type Product = Schemas['Product']
export type FileContent = Schemas['FileContent']
/** The JSON body of every error the service answers (a few fixed texts aside). */
export type ErrorBody = Schemas['Error']

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace'

/** Every operation of the API, as `METHOD /path`: `'GET /users/{userid}'`. */
export type Operation = {
  [P in keyof paths]: { [M in Method]: paths[P][M] extends { responses: object } ? `${Uppercase<M>} ${P}` : never }[Method]
}[keyof paths]

/** The documented responses of an operation, by status. */
type Responses<O extends Operation> = O extends `${infer M} ${infer P extends keyof paths}`
  ? paths[P][Lowercase<M> & Method] extends { responses: infer R } ? R : never
  : never

/** The documented statuses of responses that are not a success (2xx): those unwrap() throws as an ApiError. */
type ErrorStatus<R> = { [S in keyof R]-?: S extends number ? `${S}` extends `2${string}` ? never : S : never }[keyof R]

/** The body of a response: one of its media types' (JSON parsed, text as text); undefined when it has none. */
type BodyOf<R> = R extends { content: infer C } ? C[keyof C] : undefined

/**
 * An answer that is not a success: its status, and its body (the JSON error body, or the text of
 * the two fixed texts). Its body is unknown until isApiError() tells which operation answered.
 */
export class ApiError extends Error {
  readonly status: number
  readonly body: unknown
  readonly response: Response
  /** The operation that answered, as `METHOD /path`, when the call was made by a client of createApiClient(). */
  readonly operation: Operation | undefined

  constructor (response: Response, body: unknown, operation?: Operation) {
    const message = typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : String(body)
    super(`${response.status} ${response.statusText}: ${message}`)
    this.name = 'ApiError'
    this.status = response.status
    this.body = body
    this.response = response
    this.operation = operation
  }
}

/** An ApiError whose status and body are known. */
export type TypedApiError<Status extends number, Body> = ApiError & { readonly status: Status, readonly body: Body }

/**
 * What unwrap() throws for an operation: an ApiError per status the operation documents besides
 * a success, whose `status` tells the type of its `body`.
 */
export type OperationError<O extends Operation> = {
  [S in ErrorStatus<Responses<O>>]: TypedApiError<S, BodyOf<Responses<O>[S]>>
}[ErrorStatus<Responses<O>>]

/**
 * Whether `err` is the ApiError of one of `operation`'s documented error statuses; then its
 * `status` tells the type of its `body`:
 * `if (isApiError(err, 'GET /users/{userid}') && err.status === 404) console.log(err.body.message)`.
 */
export function isApiError<O extends Operation> (err: unknown, operation: O): err is OperationError<O> {
  return err instanceof ApiError && err.operation === operation && operations[operation]?.errors.includes(err.status) === true
}

/** What openapi-fetch answers: the data of a success, or the error body and the response. */
type Answer<Data, Failure> = { data: Data, error?: never, response: Response } | { data?: never, error: Failure, response: Response }

/** The data of an answer's success (openapi-fetch's answers make it optional in their failure). */
type SuccessData<A> = A extends { data: infer Data, error?: never } ? Data : never

/** The error responses that clients of createApiClient() received: the operation that answered, and the body's text. */
const failures = new WeakMap<Response, { operation: Operation, text: string }>()

/** Whether a response's media type is JSON (`application/json`, `application/problem+json`...). */
function isJson (response: Response): boolean {
  return /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(response.headers.get('content-type') ?? '')
}

/**
 * An error response's body as its media type says: JSON parsed, anything else as text, undefined
 * when it has none. openapi-fetch parses any text that looks like JSON (a text `404` is a number).
 */
function errorBody (response: Response, text: string): unknown {
  if (text === '' && !response.headers.has('content-type')) return undefined
  if (!isJson(response)) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The ApiError of an answer that is not a success. */
function apiError (response: Response, error: unknown): ApiError {
  const failure = failures.get(response)
  return failure === undefined ? new ApiError(response, error) : new ApiError(response, errorBody(response, failure.text), failure.operation)
}

/**
 * The data of a call's success, or an ApiError carrying the error body:
 * `const position = await unwrap(api.GET('/position/{x}/{y}', { params: { path: { x: 10, y: 10 } } }))`.
 * Catch it with isApiError(err, 'GET /position/{x}/{y}') to have the body typed by status.
 */
export async function unwrap<A extends Answer<unknown, unknown>> (call: Promise<A>): Promise<SuccessData<A>> {
  const { data, error, response } = await call
  if (!response.ok) throw apiError(response, error)
  return data as SuccessData<A>
}

/** `Basic <credentials>` (RFC 7617): `user:password` in base64 over its UTF-8 bytes, as browsers and Node both can. */
export function basicAuthorization (username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`)
  return `Basic ${btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''))}`
}

/** Credentials, sent to the operations that need them: Basic (BASIC_AUTH_USERS) and Bearer (API_TOKENS). */
export interface Credentials {
  basic?: { username: string, password: string }
  bearer?: string
}

export interface ApiClientOptions extends Pick<ClientOptions, 'fetch' | 'headers'> {
  /** The service's URL, with the prefix it is served under: `http://localhost:3000`, `https://example.com/api`. */
  baseUrl: string
  credentials?: Credentials
}

/** The fields a Range may be defined on, and the type of their values. */
export interface RangeFields { name: string, hex: string, rgb: number }

/** A page request of GET /colors: `Range: <field> [<value>][; limit <l>][; offset <o>][; order <asc|desc>]`. */
export type ColorRange = {
  [F in keyof RangeFields]: { field: F, value?: RangeFields[F], limit?: number, offset?: number, order?: 'asc' | 'desc' }
}[keyof RangeFields]

/** The Range header of a page request; the value percent-encoded (`#` → `%23`, space → `%20`). */
export function rangeHeader ({ field, value, limit, offset, order }: ColorRange): string {
  return [
    value === undefined ? field : `${field} ${encodeURIComponent(String(value))}`,
    ...(limit === undefined ? [] : [`limit ${limit}`]),
    ...(offset === undefined ? [] : [`offset ${offset}`]),
    ...(order === undefined ? [] : [`order ${order}`])
  ].join('; ')
}

/** The items of an NDJSON body, one per line, parsed as they arrive. */
export async function * ndjsonItems<T> (body: ReadableStream<Uint8Array>): AsyncGenerator<T, void, undefined> {
  const decoder = new TextDecoder()
  let pending = ''
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      pending += decoder.decode(value, { stream: !done })
      const lines = pending.split('\n')
      pending = lines.pop() as string
      for (const line of lines) if (line !== '') yield JSON.parse(line) as T
      if (done) break
    }
    if (pending !== '') yield JSON.parse(pending) as T
  } finally {
    // A consumer that stops early closes the stream: the server stops producing.
    await reader.cancel().catch(() => {})
  }
}

/**
 * A ClientInfo as the form POST /marketing reads: `clientAge` in decimal, one `clientInterestedIn`
 * key per interest (none: no key, the empty list).
 */
export function marketingForm ({ clientName, clientEmail, clientAge, clientInterestedIn }: ClientInfo): URLSearchParams {
  const form = new URLSearchParams({ clientName, clientEmail, clientAge: String(clientAge) })
  for (const interest of clientInterestedIn) form.append('clientInterestedIn', interest)
  return form
}

/** The fields of a form, each key's values in their order: `a=1&b=2&a=3` → `{ a: ['1', '3'], b: ['2'] }`. */
export function formFields (text: string): Partial<Record<string, string[]>> {
  const fields: Partial<Record<string, string[]>> = {}
  for (const [key, value] of new URLSearchParams(text)) (fields[key] ??= []).push(value)
  return fields
}

type UsersContent = paths['/users']['get']['responses'][200]['content']

/** The data of GET /users by the media type asked: JSON parsed, the text, the form's fields, the bytes. */
export interface UsersAs {
  'application/json': UsersContent['application/json']
  'text/plain': UsersContent['text/plain']
  'application/x-www-form-urlencoded': UsersContent['application/x-www-form-urlencoded']
  /** The JSON bytes, as they came. */
  'application/octet-stream': ArrayBuffer
}

/** How the body of each media type of GET /users is read. */
const readUsers: { [M in keyof UsersAs]: (response: Response) => Promise<UsersAs[M]> } = {
  'application/json': async (response) => await response.json() as User[],
  'text/plain': (response) => response.text(),
  'application/x-www-form-urlencoded': async (response) => formFields(await response.text()),
  'application/octet-stream': (response) => response.arrayBuffer()
}

/** GET /users's query and the media type asked (JSON by default). */
export interface UsersOptions<M extends keyof UsersAs> {
  accept?: M
  sortby?: NonNullable<paths['/users']['get']['parameters']['query']>['sortby']
}

/** The error bodies of an operation (those openapi-fetch's answer carries). */
type ErrorBodies<O extends Operation> = OperationError<O>['body']

/**
 * A typed client of the service: openapi-fetch's calls (`api.GET('/hello', …)`), generated from
 * the OpenAPI document, sending the credentials each operation needs; and what users need
 * beyond them: the Range pager of GET /colors, the NDJSON stream of GET /userStream, GET /users
 * typed by the media type asked, and POST /marketing as JSON or as a form.
 */
export function createApiClient ({ baseUrl, credentials = {}, ...options }: ApiClientOptions) {
  const client: Client<paths> = createClient<paths>({ baseUrl: baseUrl.replace(/\/$/, ''), ...options })
  const { basic, bearer } = credentials
  client.use({
    onRequest ({ request, schemaPath }) {
      const scheme = operations[`${request.method} ${schemaPath}`]?.security
      if (scheme === 'basic' && basic !== undefined) {
        request.headers.set('authorization', basicAuthorization(basic.username, basic.password))
      } else if (scheme === 'bearer' && bearer !== undefined) {
        request.headers.set('authorization', `Bearer ${bearer}`)
      }
      return request
    },
    async onResponse ({ request, response, schemaPath }) {
      if (response.ok) return
      // The client's paths are the document's: the method and the path name one of its operations.
      // The text is read here, before openapi-fetch parses it as JSON whatever its media type.
      failures.set(response, { operation: `${request.method} ${schemaPath}` as Operation, text: await response.clone().text() })
    }
  })

  /**
   * Every colour of a range, page after page, following `Next-Range` until the last page:
   * `for await (const color of api.colors({ field: 'name', limit: 10 })) …`.
   */
  async function * colors (range: ColorRange = { field: 'name' }): AsyncGenerator<Color, void, undefined> {
    let next: string | null = rangeHeader(range)
    while (next !== null) {
      const page: string = next
      const { data, error, response } = await client.GET('/colors', { params: { header: { Range: page } } })
      if (data === undefined) throw apiError(response, error)
      yield * data
      next = response.headers.get('next-range')
    }
  }

  /** The users of GET /userStream as they arrive; breaking out of the loop ends the stream. */
  async function * userStream (count?: number): AsyncGenerator<User, void, undefined> {
    const { error, response } = await client.GET('/userStream', {
      params: { query: count === undefined ? {} : { count } },
      headers: { accept: 'application/x-ndjson' },
      parseAs: 'stream'
    })
    if (!response.ok) throw apiError(response, error)
    yield * ndjsonItems<User>(response.body as ReadableStream<Uint8Array>)
  }

  /**
   * GET /users in the media type asked, its data typed by it: `api.users()` is User[],
   * `api.users({ accept: 'text/plain' })` a string; the answer as openapi-fetch's, for unwrap().
   */
  async function users<M extends keyof UsersAs = 'application/json'> (
    { accept, sortby }: UsersOptions<M> = {}
  ): Promise<Answer<UsersAs[M], ErrorBodies<'GET /users'>>> {
    const media = accept ?? 'application/json'
    const { error, response } = await client.GET('/users', {
      params: { query: sortby === undefined ? {} : { sortby } },
      headers: { accept: media },
      parseAs: 'stream'
    })
    if (!response.ok) return { error: error as ErrorBodies<'GET /users'>, response }
    return { data: await readUsers[media](response) as UsersAs[M], response }
  }

  /**
   * POST /marketing, the ClientInfo sent as JSON (the default) or as a form (`{ as: 'form' }`,
   * encoded by marketingForm()); the Email back.
   */
  function marketing (info: ClientInfo, { as = 'json' }: { as?: 'json' | 'form' } = {}) {
    if (as === 'json') return client.POST('/marketing', { body: info })
    return client.POST('/marketing', {
      body: info,
      bodySerializer: (body) => marketingForm(body as ClientInfo).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' }
    })
  }

  return Object.assign(client, { colors, userStream, users, marketing })
}

export type ApiClient = ReturnType<typeof createApiClient>
