import t from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { assertError, buildPlugins, json } from '../helpers/index.js'

function routes (server: FastifyInstance) {
  server.get('/n/:x', { schema: { params: Type.Object({ x: Type.Integer() }) } }, async (request) => request.params)
  server.get('/q', {
    schema: {
      querystring: Type.Object({
        name: Type.Optional(Type.String()),
        count: Type.Optional(Type.Integer({ minimum: 0 })),
        ratio: Type.Optional(Type.Number()),
        flag: Type.Optional(Type.Boolean()),
        tag: Type.Optional(Type.Array(Type.Integer())),
        page: Type.Integer({ default: 1 })
      })
    }
  }, async (request) => request.query)
  server.get('/h', {
    schema: { headers: Type.Object({ 'X-Count': Type.Optional(Type.Integer()), 'X-Name': Type.Optional(Type.String({ minLength: 2 })) }) }
  }, async (request) => ({
    count: request.headers['x-count'],
    name: request.headers['x-name'],
    other: request.headers['x-other'] ?? null
  }))
  server.get('/token', {
    schema: {
      headers: Type.Object({ 'X-Token': Type.String() }),
      querystring: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('safe')])) })
    }
  }, async (request) => ({ token: request.headers['x-token'], mode: (request.query as { mode?: string }).mode ?? null }))
  server.post('/form', {
    schema: {
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: Type.Object({ name: Type.String(), age: Type.Integer(), likes: Type.Array(Type.String()) })
    }
  }, async (request) => request.body)
  server.post('/body', {
    schema: { body: Type.Object({ n: Type.Integer(), tags: Type.Optional(Type.Array(Type.String())) }) }
  }, async (request) => ({ body: request.body, keys: Object.keys(request.body as object) }))
}

t.test('an integer capture is a sign and decimal digits within the safe range', async (t) => {
  const app = await buildPlugins(t, routes)
  const good: Array<[string, number]> = [['1', 1], ['-3', -3], ['+4', 4], ['007', 7], ['0', 0],
    ['9007199254740991', 9007199254740991], ['-9007199254740991', -9007199254740991]]
  for (const [text, value] of good) {
    t.same(json(await app.inject({ url: `/n/${text}` })), { x: value }, text)
  }
  const bad = ['1.5', '1e3', '0x10', '%201', '1%20', 'abc', '--1', '+', '9007199254740992', '-9007199254740992',
    '99999999999999999999', '1'.repeat(300)]
  for (const text of bad) {
    assertError(t, await app.inject({ url: `/n/${text}` }), 400, /^params\/x must be a decimal integer/)
  }
})

t.test('query parameters: decoded strictly, first occurrence wins, empty is a value', async (t) => {
  const app = await buildPlugins(t, routes)
  const query = async (qs: string) => json(await app.inject({ url: `/q?${qs}` }))
  t.same(await query('name=a&name=b'), { name: 'a', tag: [], page: 1 }, 'first occurrence wins')
  t.same(await query('name='), { name: '', tag: [], page: 1 }, 'empty value is the empty string')
  t.same(await query('name'), { name: '', tag: [], page: 1 }, 'no = is the empty string too')
  t.same(await query('name=Hello+World%21'), { name: 'Hello World!', tag: [], page: 1 }, 'decoded')
  t.same(await query('count=5&count=x'), { count: 5, tag: [], page: 1 })
  t.same(await query('ratio=-1.5e2&flag=false&page=3'), { ratio: -150, flag: false, tag: [], page: 3 })
  t.same(await query('tag=1&tag=-2'), { tag: [1, -2], page: 1 }, 'a list collects every occurrence')
  t.same(await query('tag=7'), { tag: [7], page: 1 }, 'a list of one')
  t.same(await query('unknown=1'), { tag: [], page: 1 }, 'unknown parameters are dropped, an absent list is empty')

  assertError(t, await app.inject({ url: '/q?count=' }), 400, 'querystring/count must be a decimal integer between 0 and 9007199254740991')
  assertError(t, await app.inject({ url: '/q?count=-1' }), 400, 'querystring/count must be >= 0')
  assertError(t, await app.inject({ url: '/q?ratio=1.2.3' }), 400, 'querystring/ratio must be a decimal number')
  assertError(t, await app.inject({ url: '/q?flag=yes' }), 400, 'querystring/flag must be true or false')
  assertError(t, await app.inject({ url: '/q?tag=1&tag=x' }), 400, 'querystring/tag/1')
})

t.test('headers are decoded like query parameters; the undeclared ones stay', async (t) => {
  const app = await buildPlugins(t, routes)
  t.same(json(await app.inject({ url: '/h', headers: { 'x-count': '12', 'x-other': 'kept' } })), { count: 12, other: 'kept' })
  t.same(json(await app.inject({ url: '/h', headers: { 'x-name': 'Alp', 'x-other': 'kept' } })), { name: 'Alp', other: 'kept' })
  assertError(t, await app.inject({ url: '/h', headers: { 'x-count': '1e3' } }), 400, 'headers/x-count')
  assertError(t, await app.inject({ url: '/h', headers: { 'X-Name': 'A' } }), 400, 'headers/x-name must NOT have fewer than 2 characters')
})

t.test('a required header declared in canonical case; a union passes through as text', async (t) => {
  const app = await buildPlugins(t, routes)
  t.same(json(await app.inject({ url: '/token?mode=safe', headers: { 'x-token': 'abc' } })), { token: 'abc', mode: 'safe' })
  assertError(t, await app.inject({ url: '/token' }), 400, 'headers must have required property \'x-token\'')
  assertError(t, await app.inject({ url: '/token?mode=slow', headers: { 'x-token': 'abc' } }), 400, 'querystring/mode')
})

t.test('JSON bodies are not coerced; unknown and poisoned keys never reach the handler', async (t) => {
  const app = await buildPlugins(t, routes)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'application/json' }, payload })
  t.same(json(await post('{"n":25,"extra":true}')), { body: { n: 25 }, keys: ['n'] })
  assertError(t, await post('{"n":"25"}'), 400, 'body/n must be integer')
  assertError(t, await post('{"n":1.5}'), 400, 'body/n must be integer')
  assertError(t, await post('{"n":1,"tags":"a"}'), 400, 'body/tags must be array')
  assertError(t, await post('{"n":1,"__proto__":{"admin":true}}'), 400, 'Body has a key that is refused: body/__proto__')
  assertError(t, await post('{"n":1,"tags":[{"\\u005f_proto__":{}}]}'), 400, 'Body has a key that is refused: body/tags/0/__proto__')
  assertError(t, await post('{"n":1,"constructor":{"prototype":{"admin":true}}}'), 400, 'Body has a key that is refused: body/constructor/prototype')
  t.same(json(await post('{"n":1,"constructor":"x"}')), { body: { n: 1 }, keys: ['n'] }, 'a constructor key without a prototype is any unknown key: dropped')
  assertError(t, await post('{"n":'), 400, 'Body is not valid JSON')
  assertError(t, await post(''), 400, 'Body cannot be empty')
  assertError(t, await post('[1]'), 400, 'body must be object')
})

t.test('form fields are decoded like a query string; the same body as JSON is not', async (t) => {
  const app = await buildPlugins(t, routes)
  const form = (payload: string) => app.inject({ method: 'POST', url: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload })
  t.same(json(await form('name=Alp+M&age=25&likes=a&likes=b%26c')), { name: 'Alp M', age: 25, likes: ['a', 'b&c'] })
  t.same(json(await form('name=Alp&age=-1&likes=x')), { name: 'Alp', age: -1, likes: ['x'] }, 'one key, a list of one')
  t.same(json(await form('name=Alp&name=Bob&age=2')), { name: 'Alp', age: 2, likes: [] }, 'no key, an empty list; first name wins')
  t.same(json(await form('name=Alp&age=2&__proto__=x&constructor=y')), { name: 'Alp', age: 2, likes: [] }, 'unknown keys dropped')
  assertError(t, await form('name=Alp&age=2.5'), 400, 'body/age must be a decimal integer')
  assertError(t, await form('age=2'), 400, 'body must have required property \'name\'')
  assertError(t, await app.inject({ method: 'POST', url: '/form', payload: { name: 'Alp', age: '25', likes: [] } }), 400, 'body/age must be integer')
})
