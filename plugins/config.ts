import fp from 'fastify-plugin'
import { loadConfig, type Config } from '../lib/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export interface ConfigPluginOptions {
  /** Settings already loaded by the entry point; read from process.env when absent. */
  config?: Config
}

export default fp<ConfigPluginOptions>(async function config (fastify, opts) {
  const settings = opts.config ?? loadConfig()
  fastify.decorate('config', settings)

  // BODY_LIMIT applies per route so that every entry point (server.ts, `fastify start`, tests) honours it.
  fastify.addHook('onRoute', (route) => {
    route.bodyLimit ??= settings.BODY_LIMIT
  })
}, { name: 'config' })
