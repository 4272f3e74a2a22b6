import zlib from 'node:zlib'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { assertError, build, buildPlugins, json } from '../helpers/index.js'
import { contentTypeHeader, essence, unsupportedCoding } from '../../lib/media-types.js'

const Pair = Type.Object({ b: Type.Integer(), a: Type.String() })

function routes (server: FastifyInstance) {
  // The payload's keys are out of schema order: the schema serializer puts them back.
  server.get('/pair', {
    schema: {
      produces: ['application/json', 'text/plain', 'application/octet-stream'],
      querystring: Type.Object({ fail: Type.Optional(Type.Boolean()) }),
      response: { 200: Pair }
    },
    config: {
      serializers: {
        'text/plain': (pair: { a: string, b: number }) => `${pair.a}=${pair.b}\n`,
        'application/octet-stream': 'schema'
      }
    }
  }, async (request) => {
    if ((request.query as { fail?: boolean }).fail === true) {
      throw Object.assign(new Error('asked to fail'), { statusCode: 400 })
    }
    return { a: 'x', b: 1 }
  })
  server.get('/json-only', { schema: { produces: ['application/json'] } }, async () => ({ ok: true }))
  server.post('/items', {
    schema: { produces: ['application/json'], body: Type.Object({ n: Type.Integer() }) }
  }, async (request) => request.body)
  server.post('/notes', {
    schema: { consumes: ['text/plain', 'application/json'], body: Type.Union([Type.String(), Type.Object({})]) }
  }, async (request) => ({ received: request.body }))
  // A body that may be absent, like GET /b's (which Fastify does not parse on GET).
  server.delete('/optional', { schema: { consumes: ['application/json'] } }, async (request) => ({ body: request.body ?? null }))
}

t.test('no Accept, */* or the first type: the first type (JSON)', async (t) => {
  const app = await buildPlugins(t, routes)
  for (const accept of [undefined, '*/*', 'application/json', '', 'application/*']) {
    const res = await app.inject({ url: '/pair', headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 200, `Accept: ${accept}`)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `Accept: ${accept}`)
    t.equal(res.body, '{"b":1,"a":"x"}', 'schema serializer, schema key order')
    t.equal(res.headers.vary, 'Accept', 'a response that depends on Accept says so')
  }
})

t.test('another type picks its serializer; q-values are honoured', async (t) => {
  const app = await buildPlugins(t, routes)
  const cases: Array<[string, string, string]> = [
    ['text/plain', 'text/plain; charset=utf-8', 'x=1\n'],
    ['text/*', 'text/plain; charset=utf-8', 'x=1\n'],
    ['application/json;q=0.1, text/plain;q=0.9', 'text/plain; charset=utf-8', 'x=1\n'],
    ['text/plain;q=0.2, application/json', 'application/json; charset=utf-8', '{"b":1,"a":"x"}'],
    ['text/html, application/octet-stream;q=0.5', 'application/octet-stream', '{"b":1,"a":"x"}'],
    ['application/json;charset=utf-8', 'application/json; charset=utf-8', '{"b":1,"a":"x"}'],
    ['text/plain; charset=UTF-8', 'text/plain; charset=utf-8', 'x=1\n'],
    ['application/json;charset=iso-8859-1, text/plain;charset=utf-8;q=0.5', 'text/plain; charset=utf-8', 'x=1\n'],
    ['application/octet-stream;charset=utf-8', 'none', ''],
    ['image/png, text/plain;q=0', 'none', '']
  ]
  for (const [accept, type, body] of cases) {
    const res = await app.inject({ url: '/pair', headers: { accept } })
    if (type === 'none') {
      assertError(t, res, 406, accept)
      continue
    }
    t.equal(res.headers['content-type'], type, `Accept: ${accept}`)
    t.equal(res.body, body, `Accept: ${accept}`)
  }
})

t.test('406 when nothing fits, naming what the endpoint produces', async (t) => {
  const app = await buildPlugins(t, routes)
  const message = assertError(t, await app.inject({ url: '/json-only', headers: { accept: 'text/html' } }), 406)
  t.match(message, /text\/html/)
  t.match(message, /application\/json/)
  t.notOk((await app.inject({ url: '/json-only' })).headers.vary, 'a single type does not vary by Accept')
})

t.test('an error after negotiation is still a JSON error', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ url: '/pair?fail=true', headers: { accept: 'text/plain' } })
  assertError(t, res, 400, 'asked to fail')
})

t.test('HEAD answers with the negotiated type and no body', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ method: 'HEAD', url: '/pair', headers: { accept: 'text/plain' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.body, '')
})

t.test('415 for a body in a type the route does not consume, or with no Content-Type', async (t) => {
  const app = await buildPlugins(t, routes)
  const post = (headers: Record<string, string>, payload?: string) => app.inject({ method: 'POST', url: '/items', headers, payload })
  assertError(t, await post({ 'content-type': 'text/plain' }, '{"n":1}'), 415, 'text/plain')
  assertError(t, await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'n=1'), 415, 'application/x-www-form-urlencoded')
  assertError(t, await post({}), 415, 'missing')
  assertError(t, await post({}, '{"n":1}'), 415, 'missing')
  t.same(json(await post({ 'content-type': 'Application/JSON; charset=UTF-8' }, '{"n":1}')), { n: 1 }, 'type compared without case or parameters')
  assertError(t, await post({ 'content-type': 'application/json' }, ''), 400)
})

t.test('415 for a body in a content coding, gzip, br or one unknown: bodies are read as they are sent, never decoded', async (t) => {
  const app = await buildPlugins(t, routes)
  const post = (encoding: string, payload: string | Buffer = '{"n":1}', type = 'application/json') =>
    app.inject({ method: 'POST', url: '/items', headers: { 'content-type': type, 'content-encoding': encoding }, payload })
  for (const encoding of ['gzip', 'br', 'deflate', 'zstd', 'x-unknown', 'GZIP', 'identity, gzip', 'identity,,br']) {
    const res = await post(encoding)
    assertError(t, res, 415, /^Content-Encoding \S+ is not supported: send the body as it is, without a content coding \(identity\)$/)
    t.equal(json(res).code, 'API_ERR_CONTENT_ENCODING', encoding)
    t.equal(res.headers['accept-encoding'], 'identity', `${encoding}: the codings the endpoint reads (RFC 9110, section 15.5.16)`)
  }
  t.equal(json(await post('gzip', zlib.gzipSync('{"n":1}'))).message, 'Content-Encoding gzip is not supported: send the body as it is, without a content coding (identity)')
  t.match(json(await post(`x-${'z'.repeat(300)}`)).message, /… \(302 characters\)/, 'the client\'s coding quoted short')
  for (const encoding of ['identity', 'Identity', '', ' , identity']) t.same(json(await post(encoding)), { n: 1 }, `${JSON.stringify(encoding)}: no coding`)
  assertError(t, await post('gzip', 'x', 'text/plain'), 415, 'Content-Type text/plain')
  assertError(t, await app.inject({ method: 'DELETE', url: '/optional', headers: { 'content-encoding': 'br' } }), 415, 'Content-Encoding br')
  t.equal((await app.inject({ url: '/json-only', headers: { 'content-encoding': 'gzip' } })).statusCode, 200, 'no body read, nothing to decode')
  t.equal(unsupportedCoding(undefined), undefined)
})

t.test('a JSON body labelled with a coding is not stored', async (t) => {
  const app = await build(t)
  const count = async () => (await app.inject({ url: '/users' })).headers['user-count']
  const before = await count()
  const user = JSON.stringify({ name: 'Zip', age: 1, email: 'zip@example.com', registration_date: '2024-01-01' })
  for (const [encoding, payload] of [['gzip', user], ['br', user], ['x-unknown', user], ['gzip', zlib.gzipSync(user)]] as const) {
    const res = await app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, payload })
    assertError(t, res, 415, `Content-Encoding ${encoding}`)
  }
  t.equal(await count(), before, 'nothing stored')
  t.equal((await app.inject({ method: 'POST', url: '/users', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, payload: user })).statusCode, 204, 'identity is no coding')
})

t.test('a route may consume several types', async (t) => {
  const app = await buildPlugins(t, routes)
  const note = (type: string, payload: string) => app.inject({ method: 'POST', url: '/notes', headers: { 'content-type': type }, payload })
  t.same(json(await note('text/plain', 'hello')), { received: 'hello' })
  t.same(json(await note('application/json', '{}')), { received: {} })
  assertError(t, await note('application/xml', '<x/>'), 415, 'text/plain, application/json')
})

t.test('an optional body: none is fine, one needs a supported type', async (t) => {
  const app = await buildPlugins(t, routes)
  t.same(json(await app.inject({ method: 'DELETE', url: '/optional' })), { body: null })
  t.same(json(await app.inject({ method: 'DELETE', url: '/optional', headers: { 'content-length': '0' } })), { body: null })
  assertError(t, await app.inject({ method: 'DELETE', url: '/optional', payload: 'x', headers: { 'content-type': 'text/plain' } }), 415)
  t.same(json(await app.inject({ method: 'DELETE', url: '/optional', payload: '{"a":1}', headers: { 'content-type': 'application/json' } })), { body: { a: 1 } })
})

t.test('406 is decided before 415', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ method: 'POST', url: '/items', headers: { accept: 'text/html', 'content-type': 'text/plain' }, payload: 'x' })
  assertError(t, res, 406)
})

t.test('header helpers', async (t) => {
  t.equal(contentTypeHeader('application/json'), 'application/json; charset=utf-8')
  t.equal(contentTypeHeader('application/problem+json'), 'application/problem+json; charset=utf-8')
  t.equal(contentTypeHeader('text/html'), 'text/html; charset=utf-8')
  t.equal(contentTypeHeader('application/x-ndjson'), 'application/x-ndjson')
  t.equal(essence(' Text/Plain ; charset=utf-8'), 'text/plain')
})
