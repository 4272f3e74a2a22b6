import t from 'tap'
import createError from '@fastify/error'
import { Type } from '@sinclair/typebox'
import { StringEnum } from '../../schemas/common.js'
import { assertError, build, buildPlugins, json, logSink } from '../helpers/index.js'
import { assertBodyRefused, sendEndlessBodies } from '../helpers/endless-body.js'

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

t.test('a 413 reads no more of the body: the whole answer, then the connection closes (JSON, chunked or by Content-Length)', async (t) => {
  const limit = 1024
  let handled = 0
  const app = await buildPlugins(t, (server) => {
    server.post('/echo', { schema: { body: Type.Object({ text: Type.String() }) } }, async (request) => { handled++; return request.body })
  }, { BODY_LIMIT: String(limit) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const headers = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
  const text = 'x'.repeat(16 * 1024)
  const cases = [
    { label: 'chunked', head: `${headers}Transfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n`, chunk: Buffer.from(`4000\r\n${text}\r\n`), end: '0\r\n\r\n' },
    { label: 'Content-Length over the limit', head: `${headers}Content-Length: ${64 * 1024 * 1024}\r\n\r\n`, chunk: Buffer.from(text), end: '' }
  ]
  // Side by side: their connections' lingering closes (lib/lingering-close.ts) are waited out once.
  const sent = await sendEndlessBodies(cases.map(({ head, chunk, end }) => ({ app, head, chunk, end })))
  for (const [index, { label }] of cases.entries()) assertBodyRefused(t, sent[index]!, limit, label)
  t.equal(handled, 0, 'no handler ran')
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
  t.match(logged, { method: 'GET', statusCode: 500, route: '/boom' }, 'with the method, the route\'s pattern and the status, which no other line at warn gives')

  t.same(json(await app.inject({ url: '/odd-status' })).statusCode, 500, 'a non-error status becomes 500')
  const custom = json(await app.inject({ url: '/custom' }))
  t.same(custom, { statusCode: 599, error: 'Error', message: 'Error' }, 'no reason phrase: a generic one')
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
