import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import Fastify from 'fastify'
import createError from '@fastify/error'
import { Type } from '@sinclair/typebox'
import config, { loadConfig } from '../../plugins/config.js'
import errors from '../../plugins/errors.js'
import { StringEnum } from '../../schemas/common.js'
import { assertError, build, buildPlugins, defaultServerOptions, json, logSink } from '../helpers/index.js'

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

t.test('a body over BODY_LIMIT is a 413', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.post('/echo', { schema: { body: Type.Object({ text: Type.String() }) } }, async (request) => request.body)
  }, { BODY_LIMIT: '64' })
  const fits = JSON.stringify({ text: 'x'.repeat(64 - 11) })
  t.equal(fits.length, 64)
  t.equal((await app.inject({ method: 'POST', url: '/echo', payload: fits, headers: { 'content-type': 'application/json' } })).statusCode, 200, 'at the limit')
  const over = JSON.stringify({ text: 'x'.repeat(64 - 10) })
  assertError(t, await app.inject({ method: 'POST', url: '/echo', payload: over, headers: { 'content-type': 'application/json' } }), 413)
})

t.test('validation errors name the field; an enum lists its values', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.get('/sorted', { schema: { querystring: Type.Object({ by: Type.Optional(StringEnum(['age', 'name'])) }) } }, async () => 'ok')
    server.post('/people', { schema: { body: Type.Object({ name: Type.String(), age: Type.Integer() }) } }, async () => 'ok')
  })
  t.equal(assertError(t, await app.inject({ url: '/sorted?by=size' }), 400), 'querystring/by must be one of: age, name')
  t.equal(assertError(t, await app.inject({ method: 'POST', url: '/people', payload: { name: 'x' } }), 400), 'body must have required property \'age\'')
  t.equal(assertError(t, await app.inject({ method: 'POST', url: '/people', payload: { name: 'x', age: 'old' } }), 400), 'body/age must be integer')
})

t.test('a server error hides its message from the client and logs it with the request id', async (t) => {
  const logs = logSink()
  const Teapot = createError('E_POT', 'the pot leaks', 599)
  const app = await buildPlugins(t, (server) => {
    server.get('/boom', async () => { throw new Error('secret database detail') })
    server.get('/odd-status', async () => { throw Object.assign(new Error('redirect?'), { statusCode: 302 }) })
    server.get('/custom', async () => { throw new Teapot() })
  }, {}, { logger: logs.logger })

  const res = await app.inject({ url: '/boom' })
  t.same(json(res), { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  t.notMatch(res.body, /secret/)
  const logged = logs.entries.find((entry) => entry.msg === 'request failed')
  t.match(logged, { level: 50, reqId: String, err: { message: 'secret database detail' } }, 'logged at error level with reqId')

  t.same(json(await app.inject({ url: '/odd-status' })).statusCode, 500, 'a non-error status becomes 500')
  const custom = json(await app.inject({ url: '/custom' }))
  t.same(custom, { statusCode: 599, error: 'Error', message: 'Error' }, 'no reason phrase: a generic one')
})

t.test('the Authorization header never reaches the logs', async (t) => {
  const logs = logSink('trace')
  const server = Fastify({ ...defaultServerOptions, logger: logs.logger })
  server.get('/', async (request) => {
    request.log.info({ headers: request.headers }, 'headers as received')
    return 'ok'
  })
  t.teardown(() => server.close())
  await server.inject({ url: '/', headers: { authorization: 'Basic c2VydmFudDpzZXJ2ZXI=', cookie: 'session=s3cr3t' } })
  const all = JSON.stringify(logs.entries)
  t.match(all, /headers as received/)
  t.notMatch(all, /c2VydmFudDpzZXJ2ZXI=/, 'credentials redacted')
  t.notMatch(all, /s3cr3t/, 'cookie redacted')
  t.match(all, /\[redacted\]/)
})

t.test('a URL that cannot be decoded is a 400 JSON error like any other', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const url of ['/hello%E0', '/static/%c0%ae%c0%ae/package.json', '/users/%ff']) {
    const res = await app.inject({ url })
    assertError(t, res, 400, 'not a valid url component')
    t.equal(json(res).code, 'FST_ERR_BAD_URL', url)
  }
})

t.test('a request that is not valid HTTP gets a JSON error, then the connection closes', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  const exchange = (request: string) => new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  const parse = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    return { status: head.split('\r\n')[0], head, body: JSON.parse(body) }
  }

  const garbage = parse(await exchange('NOT HTTP AT ALL\r\n\r\n'))
  t.equal(garbage.status, 'HTTP/1.1 400 Bad Request')
  t.match(garbage.head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/)
  t.match(garbage.body, { statusCode: 400, error: 'Bad Request', message: 'The request is not valid HTTP/1.1', code: /^HPE_/ })

  const huge = parse(await exchange(`GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
  t.equal(huge.status, 'HTTP/1.1 431 Request Header Fields Too Large')
  t.same(huge.body, { statusCode: 431, code: 'HPE_HEADER_OVERFLOW', error: 'Request Header Fields Too Large', message: 'The request headers are too large' })
})

t.test('error bodies and log lines quote client input only up to a bound', async (t) => {
  const logs = logSink()
  const app = await build(t, { DOCS_CATCH_ALL: 'false' }, { logger: logs.logger })
  const long = 'x'.repeat(9000)
  const cases = [
    { label: 'a 9,000-character capture (414)', status: 414, request: { url: `/position/${long}/1` } },
    { label: 'an undecodable 9,000-character path', status: 400, request: { url: `/${long}%E0` } },
    { label: 'a 9,000-character path that matches nothing', status: 404, request: { url: `/${long}` } },
    { label: 'a wrong method on a 5,000-character path', status: 405, request: { method: 'PATCH' as const, url: `/users/${long.slice(0, 5000)}` } },
    { label: 'a 9,000-character Accept', status: 406, request: { url: '/hello', headers: { accept: `text/${long}` } } },
    {
      label: 'a 9,000-character Content-Type',
      status: 415,
      request: { method: 'POST' as const, url: '/marketing', payload: '{}', headers: { 'content-type': `text/${long}` } }
    }
  ]
  for (const { label, status, request } of cases) {
    logs.entries.length = 0
    const res = await app.inject(request)
    const message = assertError(t, res, status)
    t.ok(message.length < 250, `${label}: a ${message.length}-character message`)
    t.match(message, /xxxx… \(\d+ characters\)/, `${label}: says the input was cut`)
    const longest = Math.max(...logs.entries.map((entry) => JSON.stringify(entry).length))
    t.ok(longest < 2000, `${label}: log lines of at most ${longest} characters`)
  }
})
