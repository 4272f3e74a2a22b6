import t from 'tap'
import { build, documentConformance } from '../helpers/index.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const ISAAC = { name: 'Isaac Newton', age: 372, email: 'isaac@newton.co.uk', registration_date: '1683-03-01' }

t.test('the checker of check 4a finds every kind of mismatch, and passes what conforms', async (t) => {
  const server = await build(t)
  const { check } = await documentConformance(server)
  const json = (statusCode: number, body: unknown, headers = {}) =>
    ({ statusCode, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) })

  t.same(check('GET', '/users', json(200, [ISAAC], { 'user-count': '1' })), [], 'a conforming response')
  t.same(check('HEAD', '/users?sortby=age', { statusCode: 200, headers: { 'content-type': JSON_TYPE, 'user-count': '2' }, body: '' }), [],
    'HEAD: the headers of GET, no body')
  t.match(check('GET', '/users', json(200, [{ ...ISAAC, age: '372' }], { 'user-count': '1' })), [/body\/0\/age must be integer/], 'a body of the wrong shape')
  t.match(check('GET', '/users', json(200, [ISAAC])), ['the required header User-Count is missing'])
  t.match(check('GET', '/users', json(200, [ISAAC], { 'user-count': 'one' })), [/header User-Count: .*must be integer/])
  t.match(check('GET', '/users', { statusCode: 200, headers: { 'content-type': 'text/html', 'user-count': '0' }, body: '' }),
    ['text/html is not a documented media type of status 200'])
  t.match(check('GET', '/position/1/2', json(418, {})), ['status 418 is not documented'])
  t.match(check('POST', '/users', { statusCode: 204, headers: {}, body: '' }), ['the required header Location is missing'])
  t.match(check('DELETE', '/users/1', { statusCode: 204, headers: { 'content-type': JSON_TYPE }, body: 'x' }), [/has no body in the document/])
  t.match(check('GET', '/users/1', json(404, { statusCode: 404, message: 'No user' })), [/must have required property 'error'/])
  t.match(check('GET', '/hello', { statusCode: 200, headers: { 'content-type': JSON_TYPE }, body: '{"msg":' }), ['the body is not JSON'])
  const ndjson = { 'content-type': 'application/x-ndjson' }
  t.same(check('GET', '/userStream', { statusCode: 200, headers: ndjson, body: `${JSON.stringify(ISAAC)}\n${JSON.stringify(ISAAC)}\n` }), [])
  t.match(check('GET', '/userStream', { statusCode: 200, headers: ndjson, body: `${JSON.stringify(ISAAC)}\n{"name":1}\n` }), [/line 2: /])
  t.match(check('GET', '/userStream', { statusCode: 200, headers: ndjson, body: JSON.stringify(ISAAC) }), ['an NDJSON body must end with a newline'])
  const file = { 'content-type': JSON_TYPE, etag: 'W/"7-1"', 'last-modified': 'Sun, 22 Nov 2026 18:53:37 GMT', 'cache-control': 'public, max-age=0', 'accept-ranges': 'bytes' }
  t.same(check('GET', '/static/a/b.json', { statusCode: 200, headers: file, body: '{"a":1}' }), [],
    'a file is bytes of any type: not parsed')
  t.equal(check('GET', '/no-such-path', json(200, {})), undefined, 'no operation of the document')
  t.equal(check('PATCH', '/users', json(405, {})), undefined, 'no such method')
})
