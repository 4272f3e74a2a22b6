import { operations } from './operations.js'
import type { BodyOf, ErrorStatus, Operation, Responses } from './operation.js'
import { retryAfter } from './retry.js'

/** What went wrong with a call; a `switch (err.kind)` narrows an ApiError to the fields of its kind. */
export type FailureKind = 'http' | 'network' | 'aborted' | 'timeout' | 'decode'

interface Failure<K extends FailureKind> extends Error {
  readonly name: 'ApiError'
  readonly kind: K
  /** The operation called, as `METHOD /path`, when the client of createApiClient() made the call. */
  readonly operation: Operation | undefined
}

/** The service answered a status that is not a success; `body` is the answer's body (JSON parsed when it is JSON, else its text). */
export interface HttpError extends Failure<'http'> {
  readonly status: number
  readonly body: unknown
  readonly response: Response
  /** The seconds the answer's Retry-After asked to wait (an HTTP-date too, counted from now); undefined when it had none. */
  readonly retryAfter: number | undefined
}

/**
 * No answer was read: the connection was refused, failed or broke, or a browser refused a
 * cross-origin call (CORS). `cause` is what fetch threw (a browser tells no more than
 * `TypeError: Failed to fetch`, by design).
 */
export interface NetworkError extends Failure<'network'> {
  readonly cause: unknown
}

/** The caller's AbortSignal aborted the call; `cause` is the signal's reason. */
export interface AbortedError extends Failure<'aborted'> {
  readonly cause: unknown
}

/** The call's timeout passed before it was done (`timeout`: the milliseconds it was given, when the client set them). */
export interface TimeoutError extends Failure<'timeout'> {
  readonly timeout: number | undefined
}

/**
 * An answer came, but its body or a header could not be read as the document says: `header`
 * names the header (missing though required, or not of its type), `cause` says why.
 */
export interface DecodeError extends Failure<'decode'> {
  readonly response: Response | undefined
  readonly header: string | undefined
  readonly cause: unknown
}

/** Every failure of a call: one error type, told apart by `kind`. */
export type ApiError = HttpError | NetworkError | AbortedError | TimeoutError | DecodeError

/** ApiError's constructor: `err instanceof ApiError` narrows `err` to the union above. Only the client makes them. */
export interface ApiErrorConstructor {
  readonly prototype: ApiError
  new (never: never): ApiError
}

/** The one class of every ApiError; its fields are those of its kind. */
class ApiFailure extends Error {
  override readonly name = 'ApiError'
  constructor (readonly kind: FailureKind, message: string, fields: object) {
    super(message)
    Object.assign(this, fields)
  }
}

// A value and a type of one name, as a class is: the type is the union of every kind.
// eslint-disable-next-line @typescript-eslint/no-redeclare
export const ApiError = ApiFailure as unknown as ApiErrorConstructor

/** An HttpError whose status and body are known. */
export type TypedApiError<Status extends number, Body> = HttpError & { readonly status: Status, readonly body: Body }

/**
 * The HttpErrors of an operation: one per status it documents besides a success, whose
 * `status` tells the type of its `body`.
 */
export type OperationError<O extends Operation> = {
  [S in ErrorStatus<Responses<O>>]: TypedApiError<S, BodyOf<Responses<O>[S]>> & { readonly operation: O }
}[ErrorStatus<Responses<O>>]

/** The operations an error may be of: the one its type knows (an OperationError's), else any. */
type OperationsOf<E> = E extends { readonly operation: infer O extends Operation } ? O : Operation

/**
 * Whether `err` is the HttpError of one of `operation`'s documented error statuses; then its
 * `status` tells the type of its `body`:
 * `if (isApiError(err, 'GET /users/{userid}') && err.status === 404) console.log(err.body.message)`.
 * An error whose type knows its operation (an `OperationError<'GET /users'>`) takes that operation only.
 */
export function isApiError<O extends OperationsOf<E>, E = unknown> (err: E | OperationError<NoInfer<O>>, operation: O): err is OperationError<O> {
  if (!(err instanceof ApiError) || err.kind !== 'http' || err.operation !== operation) return false
  const errors: readonly number[] = operations[operation].errors
  return errors.includes(err.status)
}

/** Whether a response's media type is JSON (`application/json`, `application/problem+json`...). */
export function isJson (response: Response): boolean {
  return /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(response.headers.get('content-type') ?? '')
}

/** An error response's body as its media type says: JSON parsed, anything else as text, undefined when it has none. */
function errorBody (response: Response, text: string): unknown {
  if (text === '' && !response.headers.has('content-type')) return undefined
  if (!isJson(response)) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The HttpError of an answer that is not a success, from its body as read. */
export function httpError (response: Response, body: unknown, operation?: Operation): HttpError {
  const message = typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : String(body)
  return new ApiFailure('http', `${response.status} ${response.statusText}: ${message}`, {
    status: response.status, body, response, operation, retryAfter: retryAfter(response)
  }) as HttpError
}

/** The HttpError of an answer that is not a success, from the text of its body (read as its media type says). */
export function httpErrorOfText (response: Response, text: string, operation?: Operation): HttpError {
  return httpError(response, errorBody(response, text), operation)
}

/** The DecodeError of an answer whose body or header (`header`, named) is not what the document says. */
export function decodeError (response: Response | undefined, cause: unknown, operation?: Operation, header?: string): DecodeError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new ApiFailure('decode', `the answer could not be read: ${reason}`, { response, header, cause, operation }) as DecodeError
}

/** What a call's signals were: the caller's, and the timeout the client added (with its milliseconds). */
export interface CallSignals {
  signal?: AbortSignal | undefined
  timeout?: { signal: AbortSignal, ms: number } | undefined
}

/**
 * The ApiError of whatever a call threw: an ApiError as it is; the signal's reason when the
 * caller aborted or the timeout passed (a DOMException `TimeoutError` is a timeout too, as
 * `AbortSignal.timeout()` gives); a SyntaxError of JSON.parse is a body that does not decode;
 * anything else is fetch failing to get an answer.
 */
export function toApiError (err: unknown, { signal, timeout }: CallSignals = {}, operation?: Operation): ApiError {
  if (err instanceof ApiError) return err
  if (timeout?.signal.aborted === true && (err === timeout.signal.reason || signal?.aborted !== true)) {
    return new ApiFailure('timeout', `no answer within ${timeout.ms} ms`, { timeout: timeout.ms, operation, cause: err }) as TimeoutError
  }
  const name = err instanceof Error || err instanceof DOMException ? err.name : undefined
  if (name === 'TimeoutError') return new ApiFailure('timeout', 'the call timed out', { timeout: undefined, operation, cause: err }) as TimeoutError
  if (signal?.aborted === true || name === 'AbortError') {
    return new ApiFailure('aborted', 'the call was aborted', { cause: signal?.aborted === true ? signal.reason : err, operation }) as AbortedError
  }
  if (err instanceof SyntaxError) return decodeError(undefined, err, operation)
  const reason = err instanceof Error ? err.message : String(err)
  return new ApiFailure('network', `no answer: ${reason}`, { cause: err, operation }) as NetworkError
}
