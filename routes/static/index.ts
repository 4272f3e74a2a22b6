import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import { UnavailableResponse, errorResponses } from '../../schemas/common.js'

/** The body of a file: bytes of the media type its extension says. */
const FILE = {
  type: 'string',
  format: 'binary',
  // static/hello.txt, the sample file of the project's static area.
  examples: ['Hello from the static area.\n']
}

const StaticParams = Type.Object({
  '*': Type.String({ description: 'The path of the file inside the static area, slashes included.', examples: ['hello.txt'] })
})

/** The request headers @fastify/static reads: conditional requests and byte ranges. */
const StaticRequestHeaders = Type.Object({
  Range: Type.Optional(Type.String({ description: 'One byte range, `bytes=<first>-[<last>]` or `bytes=-<suffix>`; several ranges get the whole file.', examples: ['bytes=0-3', 'bytes=-5', 'bytes=100000-'] })),
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags of the copies the client has: 304 when one is current.', examples: ['*'] })),
  'If-Modified-Since': Type.Optional(Type.String({ description: 'An HTTP date: 304 when the file has not changed since.', examples: ['Sun, 22 Nov 2026 18:53:37 GMT'] }))
})

const CACHE_HEADERS = {
  ETag: Type.String({ description: 'A weak validator of the file\'s size and modification time.' }),
  'Last-Modified': Type.String({ description: 'When the file last changed, an HTTP date.' }),
  'Cache-Control': Type.Literal('public, max-age=0'),
  'Accept-Ranges': Type.Literal('bytes')
}
const FileHeaders = Type.Object(CACHE_HEADERS)
const PartialHeaders = Type.Object({
  ...CACHE_HEADERS,
  'Content-Range': Type.String({ description: '`bytes <first>-<last>/<size>`', examples: ['bytes 0-3/28'] })
})

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
        'If-None-Match / If-Modified-Since → 304; one byte range → 206 (416 when it is past the end). ' +
        'A missing file, a directory, a dot-file or a path leaving the directory → 404.',
      params: StaticParams,
      headers: StaticRequestHeaders,
      response: {
        200: { ...FILE, description: 'The file, its Content-Type by its extension.', headers: FileHeaders },
        206: { ...FILE, description: 'The bytes of the range asked for.', headers: PartialHeaders },
        304: { description: 'Not Modified: the copy the client has is current. An empty body.', type: 'null', headers: FileHeaders },
        ...errorResponses(400, 404, 416),
        // Overload refuses it like any route; the overload plugin's hook ran before this schema existed.
        503: UnavailableResponse
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
