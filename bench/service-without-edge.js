// The service without its edge plugins (security headers and X-Request-Id, CORS, compression,
// metrics, tracing, overload, rate limits: plugins/edge/, and genReqId), composed here from the
// app's parts (app.ts) as app.ts composes the service: the baseline of edge.bench.js and a rung of
// ladder.bench.js; not a way to run the service. It loads dist/ (tsc's output) rather than the
// bundle: loading differs, the work per request does not.
import Fastify from 'fastify'
import { routes, serverOptions, servicePlugins } from '../dist/app.js'
import { loadConfig } from '../dist/lib/config/load.js'
import { holdNextTickShape } from '../dist/lib/next-tick-shape.js'
import settings from '../dist/plugins/config.js'

const config = loadConfig()
const server = Fastify({ ...serverOptions(config), genReqId: undefined })
await server.register(async function serviceWithoutEdge (fastify, opts) {
  holdNextTickShape()
  await fastify.register(settings, opts)
  await servicePlugins(fastify, opts)
  await routes(fastify, opts)
}, { config })
await server.listen({ host: config.HOST, port: config.PORT })
