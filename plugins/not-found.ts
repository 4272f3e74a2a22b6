import createError from '@fastify/error'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { allowHeader, shorten } from '../lib/errors.js'

export const RouteNotFound = createError('FST_ERR_NOT_FOUND', 'Route %s:%s not found', 404)
export const MethodNotAllowed = createError('FST_ERR_METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; allowed: %s', 405)

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

  fastify.setNotFoundHandler(function notFound (request, reply) {
    const { url } = request
    const method = request.method as HTTPMethod
    const path = shorten(url.split('?')[0] as string)
    // A route matched and sent us here itself (e.g. a missing static file): a plain 404.
    if (routes.find(method, url) === null) {
      if (fastify.config.DOCS_CATCH_ALL && fastify.hasDecorator('apiDescription')) {
        return reply.code(200).type('text/plain; charset=utf-8').send(fastify.apiDescription.markdown)
      }
      const allowed = allowHeader([...methods].filter((m) => routes.find(m, url) !== null))
      if (allowed !== '') {
        reply.header('allow', allowed)
        return reply.send(new MethodNotAllowed(method, path, allowed))
      }
    }
    return reply.send(new RouteNotFound(method, path))
  })
}, { name: 'not-found', dependencies: ['config'] })
