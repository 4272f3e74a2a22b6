import createClient, { type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch'
import type { components, paths } from './schema.js'
import { basicAuthorization, type AvailablePaths, type Callable, type Credentials } from './credentials.js'
import { decodeError, httpError, httpErrorOfText, isJson, toApiError, type ApiError, type CallSignals, type OperationError } from './errors.js'
import { decodeHeaders } from './headers.js'
import { ndjsonItems } from './ndjson.js'
import { marketingForm, formFields } from './forms.js'
import { operations } from './operations.js'
import type { Answered, Method, Operation, OperationResponse, Responses, SuccessStatus } from './operation.js'
import { rangeFields, rangeHeader, type ContentRange, type Pageable, type PageItem, type RangeOf } from './range.js'
import { nextWait, retryPolicy, sleep, type Retry } from './retry.js'

// The client of the service: openapi-fetch's calls, typed by the OpenAPI document (schema.ts,
// generated), and what a generator cannot write: credentials by operation, one error type,
// timeouts, the Range pager, the NDJSON stream, typed headers. It needs no Node API: it runs in
// browsers too.

export type { components, paths } from './schema.js'
export type { Answered, Operation, OperationResponse } from './operation.js'
export { operations } from './operations.js'
export { ApiError, isApiError } from './errors.js'
export type {
  AbortedError, ApiErrorConstructor, DecodeError, FailureKind, HttpError, NetworkError, OperationError, TimeoutError, TypedApiError
} from './errors.js'
export { basicAuthorization } from './credentials.js'
export type { AvailablePaths, Callable, Credentials, MissingCredentials, NeedingCredentials, Unavailable } from './credentials.js'
export type { Retry, RetryOptions } from './retry.js'
export { decodeHeaders } from './headers.js'
export type { CreatedLocation, ResponseHeaders } from './headers.js'
export { parseContentRange, parseRangeHeader, rangeFields, rangeHeader } from './range.js'
export type { ContentRange, Pageable, PageItem, RangeFields, RangeOf, RangeOrder } from './range.js'
export { ndjsonItems } from './ndjson.js'
export { formFields, marketingForm } from './forms.js'

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

/** What every helper takes besides its arguments. */
export interface CallOptions {
  /** Aborts the call (the answer's body included): it rejects with an ApiError of kind `aborted`. */
  signal?: AbortSignal | undefined
  /** Milliseconds the whole call may take, its body or stream included, and its retries and their waits; then an ApiError of kind `timeout`. */
  timeout?: number | undefined
  /**
   * This call's retries: `false` none, `true` the client's (or the defaults), options over the
   * client's. Only this way is a POST or a PATCH retried.
   */
  retry?: Retry | undefined
}

export interface ApiClientOptions<C extends Credentials> extends Pick<ClientOptions, 'fetch' | 'headers'> {
  /** The service's URL, with the prefix it is served under: `http://localhost:3000`, `https://example.com/api`. */
  baseUrl: string
  /** The credentials to send to the operations that need them; the client's type offers only the operations it can call. */
  credentials?: C
  /** The timeout of every call that gives none (milliseconds); none by default. */
  timeout?: number
  /**
   * Retries of the idempotent calls (GET, HEAD, PUT, DELETE…) that got 429, 503 or no answer,
   * after what Retry-After says or a jittered backoff: `true` with the defaults (3 attempts), or
   * options. None by default.
   */
  retry?: Retry
}

/** What openapi-fetch answers: the data of a success, or the error body and the response. */
type Answer<Data, Failure> = { data: Data, error?: never, response: Response } | { data?: never, error: Failure, response: Response }

/** The answer of a helper's call of `O`: its data, or its error body; its response typed by its operation. */
type AnswerOf<Data, O extends Operation> = Answered<Answer<Data, OperationError<O>['body']>, O>

/** The paths that have an operation of method `M`. */
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths]

/** A raw call's options, optional when none is required (openapi-fetch's rule), with whatever else fetch takes. */
type InitArgs<Init> = object extends Init ? [init?: Init & Record<string, unknown>] : [init: Init & Record<string, unknown>]

/**
 * A raw call of the client, openapi-fetch's (`api.GET('/users/{userid}', { params: { path: { userid: 7 } } })`)
 * with `timeout` and `retry` besides its options. Its response knows its operation (for
 * decodeHeaders()); the path of an operation that needs credentials the client was not given has
 * for type the message that says which: `"GET /users/list-all needs Basic credentials: createApiClient({ credentials: { basic } })"`.
 */
export type RawCall<M extends Method, C> = <P extends PathsWith<M>, Init extends MaybeOptionalInit<paths[P], M> & Pick<CallOptions, 'timeout' | 'retry'>>(
  url: Callable<`${Uppercase<M>} ${P}`, P, C>,
  ...init: InitArgs<Init>
) => Promise<Answered<FetchResponse<Extract<paths[P][M], object>, Init, 'application/json'>, Extract<`${Uppercase<M>} ${P}`, Operation>>>

/** The raw calls of a client given credentials `C`, by method. */
export type RawCalls<C> = { [M in Method as Uppercase<M>]: RawCall<M, C> }

/** The data of an answer's success (openapi-fetch's answers make it optional in their failure). */
type SuccessData<A> = A extends { data: infer Data, error?: never } ? Data : never

/** The error responses the clients received: the operation that answered, and the body's text (read before openapi-fetch parses it). */
const failures = new WeakMap<Response, { operation: Operation, text: string }>()

/**
 * The data of a call's success, or an ApiError: of kind `http` carrying the error body (catch it
 * with isApiError(err, 'GET /position/{x}/{y}') to have the body typed by status), or any other
 * the call rejected with:
 * `const position = await unwrap(api.GET('/position/{x}/{y}', { params: { path: { x: 10, y: 10 } } }))`.
 */
export async function unwrap<A extends Answer<unknown, unknown>> (call: Promise<A>): Promise<SuccessData<A>> {
  const { data, error, response } = await call
  if (!response.ok) {
    const failure = failures.get(response)
    throw failure === undefined ? httpError(response, error) : httpErrorOfText(response, failure.text, failure.operation)
  }
  return data as SuccessData<A>
}

/** A page of a pageable operation: its items and its headers decoded. */
export interface Page<O extends Pageable> {
  items: Array<PageItem<O>>
  /** How many items the collection holds (Total-Count). */
  totalCount: number
  /** The field's values on the first and last items (Content-Range); undefined on an empty page. */
  contentRange: ContentRange<O> | undefined
  /** The next page's range (Next-Range); undefined on the last page. */
  nextRange: RangeOf<O> | undefined
  response: OperationResponse<O, SuccessStatus<Responses<O>>>
}

/** The media types of GET /users, and the data of each as users() reads it. */
type UsersContent = paths['/users']['get']['responses'][200]['content']
export interface UsersAs {
  'application/json': UsersContent['application/json']
  'text/plain': UsersContent['text/plain']
  'application/x-www-form-urlencoded': UsersContent['application/x-www-form-urlencoded']
  /** The JSON bytes, as they came. */
  'application/octet-stream': ArrayBuffer
}

const readUsers: { [M in keyof UsersAs]: (response: Response) => Promise<UsersAs[M]> } = {
  'application/json': async (response) => await response.json() as User[],
  'text/plain': (response) => response.text(),
  'application/x-www-form-urlencoded': async (response) => formFields(await response.text()),
  'application/octet-stream': (response) => response.arrayBuffer()
}

/** GET /users's query and the media type asked (JSON by default). */
export interface UsersOptions<M extends keyof UsersAs> extends CallOptions {
  accept?: M
  sortby?: NonNullable<paths['/users']['get']['parameters']['query']>['sortby']
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const

/** A call of openapi-fetch with the types set aside, for the helpers below. */
type UntypedCall = (path: string, init?: Record<string, unknown>) => Promise<{ data?: unknown, error?: unknown, response: Response }>

/**
 * A typed client of the service: openapi-fetch's calls (`api.GET('/hello', …)`), JSON by default,
 * sending the credentials each operation needs (an operation needing credentials the client was
 * not given does not compile), rejecting only with an ApiError; and the helpers: pages of every
 * operation that pages by Range, the NDJSON stream of GET /userStream, GET /users typed by the
 * media type asked, POST /marketing as JSON or as a form. Every call takes `signal` and `timeout`.
 */
export function createApiClient<C extends Credentials = Record<never, never>> (
  { baseUrl, credentials, timeout: defaultTimeout, retry: defaultRetry, ...options }: ApiClientOptions<C>
) {
  const client = createClient<AvailablePaths<C>, 'application/json'>({ baseUrl: baseUrl.replace(/\/$/, ''), ...options })
  const { basic, bearer }: Credentials = credentials ?? {}
  client.use({
    onRequest ({ request, schemaPath }) {
      const scheme = (operations as Record<string, { security?: string }>)[`${request.method} ${schemaPath}`]?.security
      if (scheme === 'basic' && basic !== undefined) {
        request.headers.set('authorization', basicAuthorization(basic.username, basic.password))
      } else if (scheme === 'bearer' && bearer !== undefined) {
        request.headers.set('authorization', `Bearer ${bearer}`)
      }
      return request
    },
    async onResponse ({ request, response, schemaPath, options }) {
      const operation = `${request.method} ${schemaPath}` as Operation
      if (!response.ok) {
        // openapi-fetch parses an error's text as JSON whatever its media type (a text `404` is a number).
        failures.set(response, { operation, text: await response.clone().text() })
      } else if (options.parseAs === 'json' && response.status !== 204 && request.method !== 'HEAD' &&
        response.headers.has('content-type') && !isJson(response)) {
        throw decodeError(response, new TypeError(`${response.headers.get('content-type') ?? ''} is not JSON: ask for it with parseAs`), operation)
      }
    }
  })

  /** The signals of a call: the caller's, and its timeout's (the call's own, else the client's), with the time it ends at by the clock of the waits. */
  function signalsOf ({ signal, timeout = defaultTimeout }: CallOptions): CallSignals & { combined: AbortSignal | undefined, deadline: number } {
    const limit = timeout === undefined ? undefined : { signal: AbortSignal.timeout(timeout), ms: timeout }
    const combined = signal === undefined ? limit?.signal : limit === undefined ? signal : AbortSignal.any([signal, limit.signal])
    return { signal, timeout: limit, combined, deadline: performance.now() + (timeout ?? Infinity) }
  }

  /**
   * Runs a call with its signals, and again while its retry policy says so: an answer of 429 or
   * 503, or none at all, after the wait nextWait() gives, if that wait ends before the call's
   * timeout (else the answer, or the failure, is the call's). Whatever it throws becomes an ApiError.
   */
  async function guarded<T extends { response: Response }> (
    operation: Operation, options: CallOptions, run: (signal: AbortSignal | undefined) => Promise<T>, signals = signalsOf(options)
  ): Promise<T> {
    const policy = retryPolicy(defaultRetry, options.retry, operation.split(' ')[0] as string)
    for (let tries = 1; ; tries++) {
      let answer: T | undefined
      let failure: ApiError | undefined
      try {
        answer = await run(signals.combined)
      } catch (err) {
        failure = toApiError(err, signals, operation)
      }
      const response = answer?.response ?? (failure?.kind === 'http' ? failure.response : undefined)
      const retried = policy !== undefined && (response === undefined ? failure?.kind === 'network' : !response.ok)
      const wait = retried ? nextWait(policy, tries, response) : undefined
      if (wait === undefined || performance.now() + wait > signals.deadline) {
        if (failure !== undefined) throw failure
        return answer as T
      }
      await sleep(wait, signals.combined).catch((err: unknown) => { throw toApiError(err, signals, operation) })
    }
  }

  const untyped = client as unknown as Record<typeof METHODS[number], UntypedCall>
  const call = Object.fromEntries(METHODS.map((method) => [method, untyped[method].bind(client)])) as Record<typeof METHODS[number], UntypedCall>
  // Each method of the client takes `timeout` and `retry` beside openapi-fetch's options, and rejects only with an ApiError.
  for (const method of METHODS) {
    untyped[method] = (path, { signal, timeout, retry, ...init } = {}) => guarded(
      `${method} ${path}` as Operation,
      { signal: (signal ?? undefined) as AbortSignal | undefined, timeout: timeout as number | undefined, retry: retry as Retry | undefined },
      (combined) => call[method](path, { ...init, signal: combined })
    )
  }

  /** Calls an operation; answers its success, or throws its HttpError. */
  async function send (operation: Operation, init: Record<string, unknown>, signal: AbortSignal | undefined) {
    const [method, path] = operation.split(' ') as [typeof METHODS[number], string]
    const { data, response } = await call[method](path, { ...init, signal })
    if (!response.ok) throw httpErrorOfText(response, failures.get(response)?.text ?? '', operation)
    return { data, response }
  }

  /** The first page of a range: the range's field alone, when none is given. */
  function defaultRange (operation: Pageable): string {
    return Object.keys(rangeFields[operation])[0] as string
  }

  /**
   * One page of an operation that pages by Range, its headers decoded:
   * `const { items, totalCount, nextRange } = await api.page('GET /users', { field: 'id', limit: 10 })`.
   */
  function page<O extends Pageable> (pageable: Callable<O, O, C>, range?: RangeOf<O>, options: CallOptions = {}): Promise<Page<O>> {
    const operation = pageable as O
    // Made before the call: a value that cannot be encoded (a lone surrogate) is the caller's URIError, not a failed call.
    const header = range === undefined ? defaultRange(operation) : rangeHeader(range)
    return guarded(operation, options, async (signal) => {
      const { data, response } = await send(operation, { params: { header: { Range: header } } }, signal)
      const items = data as Array<PageItem<O>>
      const headers: Record<string, unknown> = decodeHeaders(operation as Pageable, response)
      return {
        items,
        totalCount: (headers['Total-Count'] as number | undefined) ?? items.length,
        contentRange: headers['Content-Range'] as ContentRange<O> | undefined,
        nextRange: headers['Next-Range'] as RangeOf<O> | undefined,
        response
      }
    })
  }

  /** Every page of a range, following Next-Range to the last: `for await (const { items } of api.pages('GET /colors', { field: 'name', limit: 10 })) …`. */
  async function * pages<O extends Pageable> (operation: Callable<O, O, C>, range?: RangeOf<O>, options: CallOptions = {}): AsyncGenerator<Page<O>, void, undefined> {
    let next: RangeOf<O> | undefined = range
    do {
      const current: Page<O> = await page<O>(operation, next, options)
      yield current
      next = current.nextRange
    } while (next !== undefined)
  }

  /** Every item of a range, page after page: `for await (const color of api.items('GET /colors')) …`. */
  async function * items<O extends Pageable> (operation: Callable<O, O, C>, range?: RangeOf<O>, options: CallOptions = {}): AsyncGenerator<PageItem<O>, void, undefined> {
    for await (const { items } of pages<O>(operation, range, options)) yield * items
  }

  /**
   * The users of GET /userStream as they arrive. Breaking out of the loop, the signal or the
   * timeout ends the stream, and the server stops producing it.
   */
  async function * userStream (count?: number, options: CallOptions = {}): AsyncGenerator<User, void, undefined> {
    const signals = signalsOf(options)
    try {
      const { data } = await guarded('GET /userStream', options, (signal) => send('GET /userStream', {
        params: { query: count === undefined ? {} : { count } },
        headers: { accept: 'application/x-ndjson' },
        parseAs: 'stream'
      }, signal), signals)
      for await (const user of ndjsonItems<User>(data as ReadableStream<Uint8Array>)) {
        // Lines already read are not handed out once the call is aborted.
        signals.combined?.throwIfAborted()
        yield user
      }
    } catch (err) {
      throw toApiError(err, signals, 'GET /userStream')
    }
  }

  /**
   * GET /users in the media type asked, its data typed by it: `api.users()` is User[],
   * `api.users({ accept: 'text/plain' })` a string; the answer as openapi-fetch's, for unwrap().
   */
  function users<M extends keyof UsersAs = 'application/json'> (
    { accept, sortby, ...options }: UsersOptions<M> = {}
  ): Promise<AnswerOf<UsersAs[M], 'GET /users'>> {
    const media = accept ?? 'application/json'
    return guarded('GET /users', options, async (signal) => {
      const { error, response } = await call.GET('/users', {
        params: { query: sortby === undefined ? {} : { sortby } },
        headers: { accept: media },
        parseAs: 'stream',
        signal
      })
      if (!response.ok) return { error: error as OperationError<'GET /users'>['body'], response } as AnswerOf<UsersAs[M], 'GET /users'>
      return { data: await readUsers[media](response) as UsersAs[M], response } as AnswerOf<UsersAs[M], 'GET /users'>
    })
  }

  /**
   * POST /marketing, the ClientInfo sent as JSON (the default) or as a form (`{ as: 'form' }`,
   * encoded by marketingForm()); the Email back.
   */
  function marketing (info: ClientInfo, { as = 'json', ...options }: { as?: 'json' | 'form' } & CallOptions = {}) {
    const form = as === 'json'
      ? {}
      : { bodySerializer: (body: ClientInfo) => marketingForm(body).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
    return untyped.POST('/marketing', { body: info, ...form, ...options }) as Promise<AnswerOf<Email, 'POST /marketing'>>
  }

  const raw = client as unknown as Omit<Client<AvailablePaths<C>, 'application/json'>, Uppercase<Method>> & RawCalls<C>
  return Object.assign(raw, { page, pages, items, userStream, users, marketing })
}

/** The client createApiClient() makes with credentials `C` (by default, credentials not known to be there: no operation that needs them). */
export type ApiClient<C extends Credentials = Credentials> = ReturnType<typeof createApiClient<C>>
