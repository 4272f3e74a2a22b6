// The service as it was before the production plugins of plugins/external/ (helmet, CORS,
// compression, metrics) and the request-id hook: the same app.ts composition from dist/ with those
// left out, and Fastify's own counter for request ids. @fastify/rate-limit stays, with its global
// limit off (as by default): plugins/auth.ts needs its counter, and off it costs a request nothing.
// The baseline of edge.bench.js; not a way to run the service. It loads dist/ (the bundle keeps no
// module of its own for config.js): loading differs, the work per request does not.
import path from 'node:path'
import autoload from '@fastify/autoload'
import Fastify from 'fastify'
import { serverOptions } from '../dist/app.js'
import config, { loadConfig } from '../dist/plugins/config.js'

const dist = path.join(import.meta.dirname, '..', 'dist')
const settings = loadConfig()
const server = Fastify({ ...serverOptions(settings), genReqId: undefined })
await server.register(async function app (fastify) {
  await fastify.register(config, { config: settings })
  await fastify.register(autoload, { dir: path.join(dist, 'plugins', 'external'), ignorePattern: /^(?!rate-limit\.js$)/, options: {} })
  await fastify.register(autoload, { dir: path.join(dist, 'plugins'), ignorePattern: /^(external|config\.js|request-id\.js)$/, options: { config: settings } })
  await fastify.register(autoload, { dir: path.join(dist, 'routes'), options: { config: settings } })
})
await server.listen({ host: settings.HOST, port: settings.PORT })
