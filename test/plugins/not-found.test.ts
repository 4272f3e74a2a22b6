import t from 'tap'
import Fastify from 'fastify'
import config from '../../plugins/config.js'
import errors from '../../plugins/errors.js'
import notFound from '../../plugins/not-found.js'
import { loadConfig } from '../../lib/config.js'
import { assertError, build, buildPlugins, defaultServerOptions } from '../helpers/index.js'

t.test('an unknown path is a 404 JSON error', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const url of ['/no-such-path', '/health/extra', '/Health']) {
    assertError(t, await app.inject({ url }), 404, url.split('?')[0])
  }
  assertError(t, await app.inject({ method: 'DELETE', url: '/nowhere' }), 404)
})

t.test('a wrong method is a 405 with Allow listing the path\'s methods', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
    const res = await app.inject({ method, url: '/health' })
    assertError(t, res, 405, method)
    t.equal(res.headers.allow, 'GET, HEAD', `${method}: Allow`)
  }
  t.equal((await app.inject({ method: 'POST', url: '/health/?x=1' })).headers.allow, 'GET, HEAD', 'trailing slash and query ignored')
})

t.test('without the description page, DOCS_CATCH_ALL on still answers 404 and 405', async (t) => {
  const server = Fastify({ ...defaultServerOptions, logger: false })
  await server.register(config, { config: loadConfig({ DOCS_CATCH_ALL: 'true' }) })
  await server.register(errors)
  await server.register(notFound)
  server.get('/here', async () => 'here')
  await server.ready()
  t.teardown(() => server.close())
  assertError(t, await server.inject({ url: '/nowhere' }), 404)
  const res = await server.inject({ method: 'POST', url: '/here' })
  assertError(t, res, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
})

t.test('a route that calls callNotFound itself answers 404, not 405', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.get('/files/:name', (_request, reply) => reply.callNotFound())
  })
  const res = await app.inject({ url: '/files/missing.txt' })
  assertError(t, res, 404)
  t.notOk(res.headers.allow)
})
