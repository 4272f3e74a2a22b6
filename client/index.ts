import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { components, paths } from './schema.js'
import { security } from './security.js'

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

/** An answer that is not a success: its status, and its body (the JSON error body, or the text of the two fixed texts). */
export class ApiError<Body = ErrorBody | string> extends Error {
  readonly status: number
  readonly body: Body
  readonly response: Response

  constructor (response: Response, body: Body) {
    const message = typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : String(body)
    super(`${response.status} ${response.statusText}: ${message}`)
    this.name = 'ApiError'
    this.status = response.status
    this.body = body
    this.response = response
  }
}

/** What openapi-fetch answers: the data of a success, or the error body and the response. */
type Answer<Data, Failure> = { data: Data, error?: never, response: Response } | { data?: never, error: Failure, response: Response }

/**
 * The data of a call's success, or an ApiError carrying its typed error body:
 * `const position = await unwrap(api.GET('/position/{x}/{y}', { params: { path: { x: 10, y: 10 } } }))`.
 */
export async function unwrap<Data, Failure> (call: Promise<Answer<Data, Failure>>): Promise<Data> {
  const { data, error, response } = await call
  if (!response.ok) throw new ApiError<Failure>(response, error as Failure)
  return data as Data
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
 * A typed client of the service: openapi-fetch's calls (`api.GET('/hello', …)`), generated from
 * the OpenAPI document, sending the credentials each operation needs; and what users need
 * beyond them: the Range pager of GET /colors and the NDJSON stream of GET /userStream.
 */
export function createApiClient ({ baseUrl, credentials = {}, ...options }: ApiClientOptions) {
  const client: Client<paths> = createClient<paths>({ baseUrl: baseUrl.replace(/\/$/, ''), ...options })
  const { basic, bearer } = credentials
  client.use({
    onRequest ({ request, schemaPath }) {
      const scheme = security[`${request.method} ${schemaPath}`]
      if (scheme === 'basic' && basic !== undefined) {
        request.headers.set('authorization', `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`)
      } else if (scheme === 'bearer' && bearer !== undefined) {
        request.headers.set('authorization', `Bearer ${bearer}`)
      }
      return request
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
      if (data === undefined) throw new ApiError(response, error)
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
    if (!response.ok) throw new ApiError(response, error as ErrorBody)
    yield * ndjsonItems<User>(response.body as ReadableStream<Uint8Array>)
  }

  return Object.assign(client, { colors, userStream })
}

export type ApiClient = ReturnType<typeof createApiClient>
