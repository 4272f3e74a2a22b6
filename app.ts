import path from 'node:path'
import autoload from '@fastify/autoload'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { ConfigPluginOptions } from './plugins/config.js'
import { clientErrorHandler, frameworkErrors } from './plugins/errors.js'

/**
 * Server options shared by every entry point: server.ts, `fastify start --options` and the tests.
 * Settings that come from the environment are applied by the entry point or by the config plugin.
 */
export const options = {
  routerOptions: {
    ignoreTrailingSlash: true,
    // Captures are validated by their schemas; a long one is a 400, not a missing route.
    maxParamLength: 8192
  },
  // Requests refused before any route runs get the same JSON error body as every other error.
  frameworkErrors,
  clientErrorHandler,
  logger: {
    // Credentials never reach the logs where headers are logged. Plain paths only: pino applies
    // redaction to every child logger's bindings, once per request, and wildcards make that slow.
    redact: {
      paths: ['headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]'
    }
  }
} satisfies FastifyServerOptions

export type AppOptions = ConfigPluginOptions

/** The service: shared plugins from plugins/, then the endpoint groups from routes/. */
export default async function app (fastify: FastifyInstance, opts: AppOptions) {
  await fastify.register(autoload, {
    dir: path.join(import.meta.dirname, 'plugins'),
    options: opts
  })
  await fastify.register(autoload, {
    dir: path.join(import.meta.dirname, 'routes'),
    options: opts
  })
}
