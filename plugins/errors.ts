import fp from 'fastify-plugin'
import { errorBody, validationMessage, type ServiceError } from '../lib/errors.js'
import { bodyStillArriving, closeAfterReply } from '../lib/lingering-close.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Every error a route or a hook raises, as the JSON error body (lib/errors.ts): the error handler,
 * and the schema error formatter that names what was wrong. A 5xx hides its message unless it was
 * written for the client (`expose`); the headers an error carries (`Retry-After`) are sent with it.
 * An error answered before the whole body arrived (a 413, or a refusal before the body is read)
 * reads no more of it and closes the connection after the answer.
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
      // The line says which request failed by itself: at LOG_LEVEL=warn no other line does.
      const route = request.routeOptions.url ?? null
      request.log[error.expose === true ? 'warn' : 'error']({ err: error, method: request.method, route, statusCode }, 'request failed')
    } else {
      request.log.info({ statusCode, code: error.code, reason: error.message }, 'request refused')
    }
    if (error.headers !== undefined) reply.headers(error.headers)
    // The rest of a body too large, or of one refused before it was read (401, 406, 415…), is not
    // read: the connection closes once the answer is out, lingering so that a client still sending
    // reads the answer (lib/lingering-close.ts).
    if (statusCode === 413 || bodyStillArriving(request.raw)) closeAfterReply(reply)
    // A serializer chosen by content negotiation must not touch an error: errors are always JSON.
    return reply.code(statusCode)
      .type(JSON_TYPE)
      .serializer(JSON.stringify)
      .send(errorBody(statusCode, error.message, error.code, error.expose))
  })
}, { name: 'errors' })
