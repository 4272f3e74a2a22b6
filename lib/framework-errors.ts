import { STATUS_CODES, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorBody, quoteUrl } from './errors.js'
import { REQUEST_ID_HEADER, newRequestId } from './request-id.js'
import { API_HEADERS } from './security-headers.js'

// The server options for what Fastify and node:http refuse before any route or plugin runs: the
// same JSON error body as every other error.

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Messages of errors Fastify raises before routing that quote the whole URL: reworded, the URL
 * shortened and the credentials in its query string redacted (the message is logged).
 */
const FRAMEWORK_MESSAGES: Record<string, (request: FastifyRequest) => string> = {
  FST_ERR_BAD_URL: (request) => `'${quoteUrl(request.url)}' is not a valid url component`,
  FST_ERR_MAX_PARAM_LENGTH: (request) => `A capture of the path '${quoteUrl(request.url)}' is longer than ` +
    `${request.server.initialConfig.routerOptions?.maxParamLength} characters`
}

/**
 * Server option `frameworkErrors`: errors Fastify raises before any route runs (a URL whose
 * percent-escapes are not UTF-8, FST_ERR_BAD_URL; a capture over maxParamLength,
 * FST_ERR_MAX_PARAM_LENGTH) get the same JSON error body as the rest, the request id and the
 * security headers.
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.statusCode ?? 400
  const message = FRAMEWORK_MESSAGES[error.code]?.(request) ?? error.message
  // The request's only line: Fastify writes no "request completed" for these (lib/access-log.ts).
  request.log.info({ req: request, statusCode, code: error.code, reason: message }, 'request refused')
  // No hook runs for these answers: the headers every answer has are set here.
  reply.code(statusCode).headers(API_HEADERS).header(REQUEST_ID_HEADER, request.id).type(JSON_TYPE)
    .send(JSON.stringify(errorBody(statusCode, message, error.code)))
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
  const reqId = newRequestId()
  this.log.info({ reqId, statusCode, code: error.code, reason: message }, 'request refused')
  answerRaw(socket, statusCode, errorBody(statusCode, message, error.code), { [REQUEST_ID_HEADER]: reqId })
  socket.destroy(error)
}

/** The security headers of every answer, as raw header lines. */
const SECURITY_HEADER_LINES = Object.entries(API_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('')

/**
 * Writes a whole JSON error answer on a socket that no route or hook will answer (the request was
 * refused before Fastify saw it), with the headers every answer has, and `Connection: close`: the
 * caller closes the socket.
 */
export function answerRaw (socket: Socket, statusCode: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  if (!socket.writable) return
  const text = JSON.stringify(body)
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  socket.write(`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(text)}\r\n${extra}${SECURITY_HEADER_LINES}Connection: close\r\n\r\n${text}`)
}

/**
 * Whether a request is HTTP/1.1 without a `Host` header, which RFC 9112 (section 3.2) has a
 * server refuse with 400: node:http's own check, which answers a bare 400 (no body, no header of
 * ours) and is turned off (the server option `http.requireHostHeader`, app.ts) so that the
 * service answers it like any other error. An empty Host is a Host, as node:http has it.
 */
export function lacksHost (request: IncomingMessage): boolean {
  return request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor === 1
}
