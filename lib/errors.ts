import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifySchemaValidationError } from 'fastify'
import type { ErrorBody } from '../schemas/common.js'
import { CODE_PREFIX } from './error-codes.js'
import { redactQuery } from './query-redaction.js'

/** How much of a piece of client input (a path, a header) an error message quotes. */
export const QUOTE_LIMIT = 100

/**
 * Client input as an error message or a log line quotes it: whole up to `limit` characters, else
 * its start, an ellipsis and its length, so that a 9,000-character path costs a line, not a page.
 */
export function shorten (text: string, limit = QUOTE_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} characters)`
}

/**
 * A URL as an error message or a log line quotes it: shortened as by `shorten`, the values of
 * credentials in the query string redacted (lib/query-redaction.ts) in the part kept. A value cut
 * short is redacted as well; a name cut short has no value in the part kept.
 */
export function quoteUrl (url: string, limit = QUOTE_LIMIT): string {
  return url.length <= limit ? redactQuery(url) : `${redactQuery(url.slice(0, limit))}… (${url.length} characters)`
}

/** One line that says what was wrong and where: `querystring/sortby must be one of: age, name`. */
export function validationMessage (error: FastifySchemaValidationError, dataVar: string): string {
  const what = error.keyword === 'enum' && Array.isArray(error.params.allowedValues)
    ? `must be one of: ${error.params.allowedValues.join(', ')}`
    : error.message ?? 'is invalid'
  return `${dataVar}${error.instancePath} ${what}`
}

/**
 * The JSON error body for a status (docs/contract.md, "Errors"). Server errors never reveal their message,
 * unless it was written for the client (`expose`, as http-errors has it: "the database is unavailable");
 * the service's own code (CODE_PREFIX) they do carry: it names the fault, and reveals nothing.
 */
export function errorBody (statusCode: number, message: string, code?: string, expose = statusCode < 500): ErrorBody {
  const error = STATUS_CODES[statusCode] ?? 'Error'
  return !expose
    ? { statusCode, ...(code?.startsWith(CODE_PREFIX) === true ? { code } : {}), error, message: error }
    : { statusCode, ...(code === undefined ? {} : { code }), error, message }
}

/** An error as the error handler reads it: Fastify's, with the http-errors conventions some errors follow. */
export interface ServiceError extends FastifyError {
  /** Response headers that go with the error (`Retry-After`, `Allow`…). */
  headers?: Record<string, string>
  /** The message was written for the client, even on a 5xx. */
  expose?: boolean
}

/**
 * An error whose message is written for the client, even on a 5xx (`The database is unavailable:
 * retry later`), with the response headers that go with it (`Retry-After`).
 */
export function exposed<E extends Error> (error: E, headers: Record<string, string> = {}) {
  return Object.assign(error, { expose: true, headers })
}

/** Seconds a client is asked to wait before it tries again a request refused for now (the database is unavailable, the service is overloaded). */
export const RETRY_AFTER_SECONDS = 5

/** Order of methods in an `Allow` header. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
/** Position of a method in an `Allow` header: the usual ones in METHOD_ORDER, any other after them. */
function rank (method: string): number {
  const index = METHOD_ORDER.indexOf(method)
  return index === -1 ? METHOD_ORDER.length : index
}
const byMethodOrder = (a: string, b: string) => rank(a) - rank(b) || a.localeCompare(b)

/** The `Allow` header of a path's methods: the usual ones in their usual order, any other after them. */
export function allowHeader (methods: Iterable<string>): string {
  return [...methods].sort(byMethodOrder).join(', ')
}
