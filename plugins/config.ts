import fp from 'fastify-plugin'
import type { FastifySchema } from 'fastify'
import { loadConfig } from '../lib/config/load.js'
import type { Config } from '../lib/config/schema.js'
import { bodyLimitOf, type BoundedSchema } from '../lib/body-limit.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export interface ConfigPluginOptions {
  /** Settings already loaded by the entry point; read from process.env when absent. */
  config?: Config
}

/**
 * What a route's body schema allows (lib/body-limit.ts); 0 for a route that takes no body, Infinity
 * for a schema that bounds not every string and list (then BODY_LIMIT is its limit).
 */
function schemaBodyLimit (schema: FastifySchema | undefined): number {
  const body = (schema?.body ?? schema?.optionalBody) as BoundedSchema | undefined
  return body === undefined ? 0 : bodyLimitOf(body, schema?.consumes)
}

export default fp<ConfigPluginOptions>(async function config (fastify, opts) {
  const settings = opts.config ?? loadConfig()
  fastify.decorate('config', settings)

  // Every route's body limit (so that every entry point honours it: server.ts, `fastify start`,
  // tests): what its body schema allows, 0 for a route that takes none, and never over BODY_LIMIT.
  // A limit of the route's own wins (bodyLimit in its options).
  fastify.addHook('onRoute', (route) => {
    const limit = route.bodyLimit ?? schemaBodyLimit(route.schema)
    if (limit > settings.BODY_LIMIT && limit !== Infinity) {
      fastify.log.warn({ route: route.url, bodyLimit: limit, BODY_LIMIT: settings.BODY_LIMIT },
        `BODY_LIMIT (${settings.BODY_LIMIT}) is below the longest valid body of ${[route.method].flat().join(',')} ${route.url} (${limit} bytes): valid bodies over it get 413`)
    }
    route.bodyLimit = Math.min(limit, settings.BODY_LIMIT)
  })
}, { name: 'config' })
