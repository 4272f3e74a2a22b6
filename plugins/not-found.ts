import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import createError from '@fastify/error'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { allowHeader, errorBody, shorten } from '../lib/errors.js'
import { answerRaw } from '../lib/framework-errors.js'
import { carriesBody } from '../lib/body-limit.js'
import { bodyStillArriving, closeAfterReply } from '../lib/lingering-close.js'
import { REQUEST_ID_HEADER, requestId } from '../lib/request-id.js'
import { MethodNotAllowed } from '../lib/error-codes.js'

export const RouteNotFound = createError('FST_ERR_NOT_FOUND', 'Route %s:%s not found', 404)

/**
 * Requests that match no route (404) or no method of a route (405 with `Allow`), as JSON errors;
 * with DOCS_CATCH_ALL on, both get the description page instead, when the description plugin is
 * there (docs/contract.md, "The description page").
 */
export default fp(async function notFound (fastify) {
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

  /** The methods a path has, for `Allow`: empty when it has none. */
  const allowedOn = (url: string) => allowHeader([...methods].filter((m) => routes.find(m, url) !== null))

  function notFound (request: FastifyRequest, reply: FastifyReply) {
    const { url } = request
    const method = request.method as HTTPMethod
    const path = shorten(url.split('?')[0] as string)
    // A route matched and sent us here itself (e.g. a missing static file): a plain 404.
    if (routes.find(method, url) === null) {
      if (fastify.config.DOCS_CATCH_ALL && fastify.hasDecorator('apiDescription')) {
        // A body sent along is not read: the connection closes after the page (plugins/errors.ts
        // does the same for the 404 and 405 below).
        if (bodyStillArriving(request.raw)) closeAfterReply(reply)
        return reply.code(200).type('text/plain; charset=utf-8').send(fastify.apiDescription.markdown)
      }
      const allowed = allowedOn(url)
      if (allowed !== '') {
        reply.header('allow', allowed)
        return reply.send(new MethodNotAllowed(method, path, allowed))
      }
    }
    return reply.send(new RouteNotFound(method, path))
  }
  fastify.setNotFoundHandler(notFound)

  // Answered before Fastify would read a body for the not-found handler: a QUERY, which Fastify
  // refuses without a Content-Type (400) before any handler runs, also the not-found one (the
  // 404/405 is the answer, as for every other method); and any request with a body, which no route
  // takes here (it is left unread: plugins/errors.ts).
  fastify.addHook('onRequest', function answeredUnread (request, reply, done) {
    if (request.is404 && (request.method === 'QUERY' || carriesBody(request.headers))) return notFound(request, reply)
    done()
  })

  // CONNECT is not routed: node:http hands it over (`connect`) and, without a listener, drops the
  // connection. It gets the 405 (or 404) as well, then the connection closes.
  fastify.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const url = request.url ?? '/'
    const allowed = url.startsWith('/') ? allowedOn(url) : ''
    const path = shorten(url.split('?')[0] as string)
    const reqId = requestId(request)
    fastify.log.info({ reqId, method: 'CONNECT', url: path }, 'request refused')
    const error = allowed === '' ? new RouteNotFound('CONNECT', path) : new MethodNotAllowed('CONNECT', path, allowed)
    answerRaw(socket, error.statusCode!, errorBody(error.statusCode!, error.message, error.code),
      { [REQUEST_ID_HEADER]: reqId, ...(allowed === '' ? {} : { allow: allowed }) })
    socket.end()
  })
}, { name: 'not-found', dependencies: ['config'] })
