import { CollectionFull, FailureTableFull, RateLimited, TooManyFailures, TooManyStreams } from '../error-codes.js'
import { family } from './text-format.js'

/**
 * The causes of `http_requests_refused_total`: the refusals an operator watches apart from the
 * requests' statuses, where a 503 or a 429 could have several causes.
 */
export const REFUSAL_CAUSES = ['overload', 'rate_limit', 'failed_logins', 'body_too_large', 'collection_full', 'stream_limit', 'auth_table_full'] as const
export type RefusalCause = typeof REFUSAL_CAUSES[number]

/**
 * The code of @fastify/under-pressure's refusal, which plugins/edge/under-pressure.ts keeps for
 * its own 503 (a plugin's error stays as the plugin raises it: lib/error-codes.ts).
 */
export const OVERLOAD_CODE = 'FST_UNDER_PRESSURE'

/** An error a request ends with, and what the metrics read of it. */
interface Refusal extends Error {
  code?: unknown
  statusCode?: unknown
}

/**
 * The cause of a refusal, from the error it is answered with: the overload 503, the 429 of the
 * global rate limit (RateLimited), the 429 of the failed-login limits (their errors share one
 * code), any 413 (a body over the route's limit, or a body on a route that takes none), the
 * 409 of a collection at its ceiling of items (CollectionFull), the 429 of a client with as many
 * streams open as STREAMS_PER_CLIENT (TooManyStreams), the 503 of a failed-login table whose locks
 * fill their room (FailureTableFull); undefined for any other error.
 */
export function refusalCause (error: Refusal): RefusalCause | undefined {
  if (error.code === OVERLOAD_CODE) return 'overload'
  if (error instanceof RateLimited) return 'rate_limit'
  if (error instanceof TooManyFailures) return 'failed_logins'
  if (error.statusCode === 413) return 'body_too_large'
  if (error instanceof CollectionFull) return 'collection_full'
  if (error instanceof TooManyStreams) return 'stream_limit'
  if (error instanceof FailureTableFull) return 'auth_table_full'
  return undefined
}

/**
 * The refusals counted by cause, plain numbers: under overload or a flood every request is one,
 * so counting costs an addition, not a label lookup. Every cause is written from the start, at 0,
 * so that `rate()` and `increase()` see a refusal's first occurrence.
 */
export class Refusals {
  readonly #counts: Record<RefusalCause, number> = { overload: 0, rate_limit: 0, failed_logins: 0, body_too_large: 0, collection_full: 0, stream_limit: 0, auth_table_full: 0 }

  /** Counts the error if it is a refusal of one of the causes. */
  count (error: Refusal): void {
    const cause = refusalCause(error)
    if (cause !== undefined) this.#counts[cause]++
  }

  render (): string {
    return family('http_requests_refused_total', 'counter', 'API requests refused, by cause: overload (503), rate_limit (429), failed_logins (429), body_too_large (413), collection_full (409), stream_limit (429), auth_table_full (503)',
      REFUSAL_CAUSES.map((cause) => [{ cause }, this.#counts[cause]]))
  }
}
