import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import Fastify from 'fastify'
import config from '../../plugins/config.js'
import errors from '../../plugins/errors.js'
import notFound from '../../plugins/not-found.js'
import { loadConfig } from '../../lib/config/load.js'
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

t.test('every method Node accepts on a path without it is a 405 with Allow: QUERY without a Content-Type too', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const methods = http.METHODS.filter((method) => !['GET', 'HEAD', 'CONNECT'].includes(method))
  for (const method of methods) {
    const res = await app.inject({ method: method as 'GET', url: '/health' })
    t.equal(res.statusCode, 405, `${method} /health`)
    t.equal(res.headers.allow, 'GET, HEAD', `${method}: Allow`)
  }
  assertError(t, await app.inject({ method: 'QUERY' as 'GET', url: '/health' }), 405, 'Method QUERY is not allowed on /health')
  assertError(t, await app.inject({ method: 'QUERY' as 'GET', url: '/nowhere' }), 404)
  const withBody = await app.inject({ method: 'QUERY' as 'GET', url: '/health', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(withBody.statusCode, 405, 'QUERY with a body: 405 as well')
})

t.test('CONNECT, which node:http does not route: 405 with Allow, or 404, then the connection closes', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const exchange = (request: string) => new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  const path = await exchange('CONNECT /health HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(path, /^HTTP\/1\.1 405 Method Not Allowed\r\n/)
  t.match(path, /\r\nallow: GET, HEAD\r\n/)
  t.match(path, /\r\nx-content-type-options: nosniff\r\n/, 'the security headers')
  t.match(JSON.parse(path.split('\r\n\r\n')[1]!), { statusCode: 405, code: 'API_ERR_METHOD_NOT_ALLOWED', message: 'Method CONNECT is not allowed on /health; allowed: GET, HEAD' })
  const authority = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
  t.match(authority, /^HTTP\/1\.1 404 Not Found\r\n/)
  t.match(JSON.parse(authority.split('\r\n\r\n')[1]!), { statusCode: 404, code: 'FST_ERR_NOT_FOUND' })
})
