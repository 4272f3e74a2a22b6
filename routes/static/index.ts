import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { StaticFileRouteSchema } from '../../schemas/static.js'

/**
 * /static/*: the files of STATIC_DIR (GET and HEAD), by @fastify/static: Content-Type by extension,
 * ETag, Last-Modified, conditional requests (304) and byte ranges. No directory listing, no index
 * files, no dot-files. Every request that names no servable file goes through `callNotFound()`, so
 * it is a 404 JSON error, also when the description catch-all is on.
 */
const staticFiles: FastifyPluginAsync = async (fastify) => {
  // @fastify/static refuses paths that leave the directory or are not canonical with a 403, and
  // malformed ones (bad escapes, NUL) with a 400: to the client, there is simply no such file.
  const handleError = fastify.errorHandler
  fastify.setErrorHandler(function staticError (error: FastifyError, request, reply) {
    if (error.statusCode === 403 || error.statusCode === 400) return reply.callNotFound()
    return handleError.call(this, error, request, reply)
  })

  // @fastify/static's route takes no schema: describe it for the description page and OpenAPI.
  fastify.addHook('onRoute', (route) => {
    if (!route.url.endsWith('*')) return
    Object.assign(route.schema ??= {}, StaticFileRouteSchema)
  })

  // The area's own directory (/static, /static/): a route too, so that the catch-all leaves it alone.
  fastify.get('/', { schema: { hide: true } }, (_request, reply) => reply.callNotFound())

  await fastify.register(fastifyStatic, {
    root: fastify.config.STATIC_DIR,
    // The folder's prefix is /static: the route is /static/*.
    prefix: '/',
    index: false,
    list: false,
    redirect: false,
    dotfiles: 'ignore',
    decorateReply: false,
    schemaHide: false
  })
}

export default staticFiles
