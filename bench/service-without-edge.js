// The service without its production plugins (app.ts with `edge: false`): the baseline of
// edge.bench.js and a rung of ladder.bench.js; not a way to run the service. It loads dist/ (tsc's
// output) rather than the bundle: loading differs, the work per request does not.
import Fastify from 'fastify'
import app, { serverOptions } from '../dist/app.js'
import { loadConfig } from '../dist/lib/config/load.js'

const config = loadConfig()
const server = Fastify(serverOptions(config, { edge: false }))
await server.register(app, { config, edge: false })
await server.listen({ host: config.HOST, port: config.PORT })
