import t from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { LINGER_BYTES } from '../../../lib/lingering-close.js'
import { isFormFields, parseForm } from '../../../lib/wire.js'
import { assertError, buildPlugins, json } from '../../helpers/index.js'
import { sendEndlessBody } from '../../helpers/endless-body.js'

// application/x-www-form-urlencoded bodies (plugins/external/formbody.ts): read whole up to the
// body limit, or refused with 413; never silently shortened.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

function routes (server: FastifyInstance) {
  const body = Type.Object({ item: Type.Array(Type.String()), last: Type.String() })
  server.post('/form', { schema: { consumes: ['application/x-www-form-urlencoded'], body } }, async (request) => {
    const { item, last } = request.body as { item: string[], last: string }
    return { items: item.length, lastItem: item.at(-1), last }
  })
}

t.test('parseForm: every pair, repeated keys as lists, text decoded; marked as form fields', async (t) => {
  const fields = parseForm('a=1&a=2&b=x+y%21&c=&d')
  t.same({ ...fields }, { a: ['1', '2'], b: 'x y!', c: '', d: '' })
  t.ok(isFormFields(fields), 'decoded like a query string by validation')
  const many = parseForm(Array.from({ length: 5000 }, (_, i) => `k${i}=${i}`).join('&'))
  t.equal(Object.keys(many).length, 5000, '5,000 distinct keys: none dropped (node:querystring keeps 1,000 by default)')
  t.equal(many.k4999, '4999')
  const odd = parseForm('%ZZ=%E0&__proto__=1')
  t.same(Object.entries(odd), [['%ZZ', '\ufffd'], ['__proto__', '1']], 'bad escapes do not fail; __proto__ is a field like any other')
  t.equal(Object.getPrototypeOf(odd), null, 'of an object without prototype')
})

t.test('a form is read whole: 1,500 values of one key, or 2,000 keys before the last field', async (t) => {
  const app = await buildPlugins(t, routes)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/form', headers: FORM, payload })
  const repeated = Array.from({ length: 1500 }, (_, i) => `item=v${i}`).join('&')
  t.same(json(await post(`${repeated}&last=end`)), { items: 1500, lastItem: 'v1499', last: 'end' }, 'all 1,500 values, in order')
  const unknown = Array.from({ length: 2000 }, (_, i) => `unknown${i}=x`).join('&')
  t.same(json(await post(`item=a&${unknown}&last=end`)), { items: 1, lastItem: 'a', last: 'end' }, 'a field after 2,000 unknown keys is read')
})

t.test('a form over BODY_LIMIT is a 413, never a shortened form', async (t) => {
  const app = await buildPlugins(t, routes, { BODY_LIMIT: '1024' })
  const fits = `last=end&item=${'x'.repeat(1024 - 'last=end&item='.length)}`
  t.equal(fits.length, 1024)
  t.same(json(await app.inject({ method: 'POST', url: '/form', headers: FORM, payload: fits })).items, 1, 'at the limit')
  assertError(t, await app.inject({ method: 'POST', url: '/form', headers: FORM, payload: `${fits}x` }), 413)
  const pairs = Array.from({ length: 400 }, () => 'item=x').join('&')
  assertError(t, await app.inject({ method: 'POST', url: '/form', headers: FORM, payload: pairs }), 413, /too large/)
})

t.test('a form streamed far over BODY_LIMIT: the whole 413, then the connection closes; the rest is not read', async (t) => {
  const limit = 1024
  const app = await buildPlugins(t, routes, { BODY_LIMIT: String(limit) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const pairs = Array.from({ length: 2048 }, () => 'item=xxxxxxx').join('&')
  const chunk = Buffer.from(`${(pairs.length + 1).toString(16)}\r\n${pairs}&\r\n`)
  const head = 'POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n'
  const sent = await sendEndlessBody(app, head, chunk, { end: '0\r\n\r\n' })
  t.equal(sent.status, 413)
  t.ok(sent.whole, 'the whole answer arrived')
  t.match(JSON.parse(sent.body), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
  t.equal(sent.headers.connection, 'close')
  t.ok(sent.ended, 'then the server ended the connection')
  // As for JSON bodies (test/plugins/errors.test.ts): bounded whatever the speed, of 64 MB offered.
  t.ok(sent.serverRead < limit + LINGER_BYTES + 1024 * 1024, `the server read ${sent.serverRead} bytes of the ${sent.written} written`)
})
