import fs from 'node:fs/promises'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { StaticFileRouteSchema } from '../../schemas/static.js'

/** The real path of a file, or undefined when there is none (the static plugin answers 404 then). */
async function realPath (file: string): Promise<string | undefined> {
  try {
    return await fs.realpath(file)
  } catch {
    return undefined
  }
}

/** The area's own real path (STATIC_DIR may be a symlink itself), or the path as given when it is missing. */
async function realArea (dir: string): Promise<string> {
  return (await realPath(dir)) ?? dir
}

/**
 * /static/*: the files of STATIC_DIR (GET and HEAD), by @fastify/static: Content-Type by extension,
 * ETag, Last-Modified, conditional requests (304) and byte ranges. No directory listing, no index
 * files, no dot-files, no symlink out of the area (unless STATIC_FOLLOW_SYMLINKS). Every request
 * that names no servable file goes through `callNotFound()`, so it is a 404 JSON error, also when
 * the description catch-all is on.
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

  // A symlink (a file's or a directory's on the way) whose target leaves the area is no file of it,
  // unless STATIC_FOLLOW_SYMLINKS allows it: checked on the file's real path before it is sent.
  if (!fastify.config.STATIC_FOLLOW_SYMLINKS) {
    const root = await realArea(fastify.config.STATIC_DIR)
    fastify.addHook('onRoute', (route) => {
      if (!route.url.endsWith('*')) return
      route.preHandler = [...[route.preHandler ?? []].flat(), async function insideTheArea (request, reply) {
        const target = await realPath(path.join(root, (request.params as Record<string, string>)['*'] ?? ''))
        if (target !== undefined && target !== root && !target.startsWith(root + path.sep)) return reply.callNotFound()
      }] as typeof route.preHandler
    })
  }

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
