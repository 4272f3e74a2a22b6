import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import app, { serverOptions } from '../../app.js'
import { buildPlugins, json, logSink, until } from '../helpers/index.js'
import { loadConfig } from '../../lib/config/load.js'

/** A route that validates its query string and serialises its answer. */
function fineRoute (server: FastifyInstance) {
  server.get('/fine', {
    schema: { querystring: Type.Object({ n: Type.Integer() }), response: { 200: Type.Object({ n: Type.Integer() }) } }
  }, async (request) => request.query)
}

/** A route whose response schema fast-json-stringify cannot compile (a $ref to nothing), and a valid one. */
function routes (server: FastifyInstance) {
  server.get('/broken', { schema: { response: { 200: { $ref: 'nowhere#' } } } }, async () => ({ ok: true }))
  fineRoute(server)
}

t.test('no schema is compiled at ready: a broken one does not stop the start', async (t) => {
  const server = await buildPlugins(t, routes)
  t.pass('ready() resolved although /broken has a response schema that cannot compile')
  const fine = await server.inject({ url: '/fine?n=5' })
  t.equal(fine.statusCode, 200, 'a route compiles its schemas on its first request')
  t.same(json(fine), { n: 5 })
  t.equal((await server.inject({ url: '/fine?n=x' })).statusCode, 400, 'and validates with them')
  const broken = await server.inject({ url: '/broken' })
  t.equal(broken.statusCode, 500, 'the broken schema fails where it is used')
  t.same(json(broken), { statusCode: 500, code: 'API_ERR_SCHEMA_COMPILE', error: 'Internal Server Error', message: 'Internal Server Error' }, 'with the code that names the fault, and no more')
  await t.rejects(server.compilePending(), { code: 'API_ERR_SCHEMA_COMPILE', message: /^The schema of GET \/broken: the 200 response does not compile: / }, 'compilePending() reports the schema that does not compile, by its route')
})

t.test('once the server listens, what was not compiled is compiled in the background', async (t) => {
  const sink = logSink('error')
  const server = await buildPlugins(t, routes, {}, { logger: sink.logger })
  t.same(sink.entries, [], 'nothing compiled, nothing reported, before listen')
  await server.listen({ port: 0, host: '127.0.0.1' })
  await until(() => sink.entries.some((entry) => entry.msg === 'a schema does not compile'))
  t.match(sink.entries.find((entry) => entry.msg === 'a schema does not compile'), { schema: 'GET /broken: the 200 response' },
    'the broken schema was compiled, and reported by its route, without any request')
})

t.test('when all compile, the count and the time are logged', async (t) => {
  const sink = logSink('info')
  const server = await buildPlugins(t, fineRoute, {}, { logger: sink.logger })
  await server.listen({ port: 0, host: '127.0.0.1' })
  await until(() => sink.entries.some((entry) => entry.msg === 'schemas compiled'))
  t.match(sink.entries.find((entry) => entry.msg === 'schemas compiled'), { level: 30, compiled: Number, ms: Number })
  const fine = await server.inject({ url: '/fine?n=1' })
  t.same(json(fine), { n: 1 }, 'and the route answers with them')
})

t.test('every schema of the service compiles', async (t) => {
  for (const env of [{ METRICS_PORT: '0' }, { NODE_ENV: 'production', STORE: 'memory', METRICS_PORT: '0', BASE_PATH: '/api', RATE_LIMIT_MAX: '100', COMPRESSION: 'false' }]) {
    const config = loadConfig(env)
    const server = Fastify(serverOptions(config, { logger: false }))
    // The app's own context, where its plugins decorate.
    const contexts: FastifyInstance[] = []
    server.addHook('onRegister', (instance) => { contexts.push(instance) })
    await server.register(app, { config })
    await server.ready()
    t.teardown(() => server.close())
    const [context] = contexts
    if (context === undefined) throw new Error('the app registered no context')
    await t.resolves(context.compilePending(), JSON.stringify(env))
  }
})
