import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { errorResponses } from '../../schemas/common.js'

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
    Object.assign(route.schema ??= {}, {
      summary: 'A file of the static area',
      description: 'The file at this path inside STATIC_DIR, with ETag and Last-Modified; ' +
        'If-None-Match / If-Modified-Since → 304. A missing file, a directory, a dot-file or a path ' +
        'leaving the directory → 404.',
      response: {
        200: {
          description: 'The file, its Content-Type by its extension.',
          type: 'string',
          format: 'binary',
          // static/hello.txt, the sample file of the project's static area.
          examples: ['Hello from the static area.\n']
        },
        304: { description: 'Not Modified: the copy the client has is current. An empty body.', type: 'null' },
        ...errorResponses(404)
      }
    })
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
