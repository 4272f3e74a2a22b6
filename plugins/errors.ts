import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import createError from '@fastify/error'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import type { ErrorBody } from '../schemas/common.js'
import { REQUEST_ID_HEADER } from './request-id.js'

/** How much of a piece of client input (a path, a header) an error message quotes. */
export const QUOTE_LIMIT = 100

/**
 * Client input as an error message or a log line quotes it: whole up to `limit` characters, else
 * its start, an ellipsis and its length, so that a 9,000-character path costs a line, not a page.
 */
export function shorten (text: string, limit = QUOTE_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} characters)`
}

export const RouteNotFound = createError('FST_ERR_NOT_FOUND', 'Route %s:%s not found', 404)
export const MethodNotAllowed = createError('FST_ERR_METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; allowed: %s', 405)

/** Order of methods in an `Allow` header. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
/** Position of a method in an `Allow` header: the usual ones in METHOD_ORDER, any other after them. */
function rank (method: string): number {
  const index = METHOD_ORDER.indexOf(method)
  return index === -1 ? METHOD_ORDER.length : index
}
const byMethodOrder = (a: string, b: string) => rank(a) - rank(b) || a.localeCompare(b)

/** One line that says what was wrong and where: `querystring/sortby must be one of: age, name`. */
export function validationMessage (error: FastifySchemaValidationError, dataVar: string): string {
  const what = error.keyword === 'enum' && Array.isArray(error.params.allowedValues)
    ? `must be one of: ${error.params.allowedValues.join(', ')}`
    : error.message ?? 'is invalid'
  return `${dataVar}${error.instancePath} ${what}`
}

/**
 * The JSON error body of DECISIONS §1 for a status. Server errors never reveal their message,
 * unless it was written for the client (`expose`, as http-errors has it: "the database is unavailable").
 */
export function errorBody (statusCode: number, message: string, code?: string, expose = statusCode < 500): ErrorBody {
  const error = STATUS_CODES[statusCode] ?? 'Error'
  return !expose
    ? { statusCode, error, message: error }
    : { statusCode, ...(code === undefined ? {} : { code }), error, message }
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** Messages of errors Fastify raises before routing that quote the whole path: reworded, the path shortened. */
const FRAMEWORK_MESSAGES: Record<string, (request: FastifyRequest) => string> = {
  FST_ERR_BAD_URL: (request) => `'${shorten(request.url)}' is not a valid url component`,
  FST_ERR_MAX_PARAM_LENGTH: (request) => `A capture of the path '${shorten(request.url)}' is longer than ` +
    `${request.server.initialConfig.routerOptions?.maxParamLength} characters`
}

/**
 * Server option `frameworkErrors`: errors Fastify raises before any route runs (a URL whose
 * percent-escapes are not UTF-8, FST_ERR_BAD_URL; a capture over maxParamLength,
 * FST_ERR_MAX_PARAM_LENGTH) get the same JSON error body as the rest, and the request id.
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.statusCode ?? 400
  const message = FRAMEWORK_MESSAGES[error.code]?.(request) ?? error.message
  request.log.info({ statusCode, code: error.code, reason: message }, 'request refused')
  reply.code(statusCode).header(REQUEST_ID_HEADER, request.id).type(JSON_TYPE)
    .send(JSON.stringify(errorBody(statusCode, message, error.code)))
}

/** An error as the handler reads it: Fastify's, with the http-errors conventions some errors follow. */
interface ServiceError extends FastifyError {
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

const CLIENT_ERRORS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time'],
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large']
}

/**
 * Server option `clientErrorHandler`: a request node:http cannot parse, or that arrives too slowly,
 * is answered with the JSON error body before the connection is closed (Fastify's default answers
 * a body of another shape). Nothing of the request can be trusted, so it gets a new request id,
 * sent back and logged with the refusal (not the bytes received).
 */
export function clientErrorHandler (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [statusCode, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'The request is not valid HTTP/1.1']
  const reqId = randomUUID()
  this.log.info({ reqId, statusCode, code: error.code, reason: message }, 'request refused')
  const body = JSON.stringify(errorBody(statusCode, message, error.code))
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: ${JSON_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${reqId}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

/**
 * Every error the service produces, as JSON: the error handler, the schema error formatter,
 * and the handler for requests that match no route (404) or no method of a route (405 + Allow),
 * which serves the description page instead when DOCS_CATCH_ALL is on and the page is there.
 */
export default fp(async function errors (fastify) {
  fastify.setSchemaErrorFormatter((errors, dataVar) => {
    const [first] = errors
    return new Error(first === undefined ? `${dataVar} is invalid` : validationMessage(first, dataVar))
  })

  fastify.setErrorHandler(function handleError (error: ServiceError, request, reply) {
    const status = error.statusCode ?? 500
    const statusCode = status >= 400 && status <= 599 ? status : 500
    if (statusCode >= 500) {
      // A 5xx written for the client (the database is down, overload) is the service's answer, not its fault.
      request.log[error.expose === true ? 'warn' : 'error']({ err: error }, 'request failed')
    } else {
      request.log.info({ statusCode, code: error.code, reason: error.message }, 'request refused')
    }
    if (error.headers !== undefined) reply.headers(error.headers)
    // A serializer chosen by content negotiation must not touch an error: errors are always JSON.
    return reply.code(statusCode)
      .type(JSON_TYPE)
      .serializer(JSON.stringify)
      .send(errorBody(statusCode, error.message, error.code, error.expose))
  })

  // Which methods each path answers, from the routes as they are registered.
  const routes = FindMyWay({ ...fastify.initialConfig.routerOptions })
  const methods = new Set<HTTPMethod>()
  fastify.addHook('onRoute', ({ method, url }) => {
    // A route for every path (@fastify/cors's OPTIONS *, for preflights) says nothing of what a path has.
    if (url === '*') return
    for (const m of [method].flat().map((name) => name.toUpperCase() as HTTPMethod)) {
      methods.add(m)
      if (routes.findRoute(m, url) === null) routes.on(m, url, () => {})
    }
  })

  fastify.setNotFoundHandler(function notFound (request, reply) {
    const { url } = request
    const method = request.method as HTTPMethod
    const path = shorten(url.split('?')[0] as string)
    // A route matched and sent us here itself (e.g. a missing static file): a plain 404.
    if (routes.find(method, url) === null) {
      // DOCS_CATCH_ALL (DECISIONS §6): no route or no method gets the description page instead.
      if (fastify.hasDecorator('apiDescription') && fastify.config.DOCS_CATCH_ALL) {
        return reply.code(200).type('text/plain; charset=utf-8').send(fastify.apiDescription.markdown)
      }
      const allowed = [...methods].filter((m) => routes.find(m, url) !== null).sort(byMethodOrder).join(', ')
      if (allowed !== '') {
        reply.header('allow', allowed)
        return reply.send(new MethodNotAllowed(method, path, allowed))
      }
    }
    return reply.send(new RouteNotFound(method, path))
  })
}, { name: 'errors' })
