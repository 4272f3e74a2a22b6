import t from 'tap'
import type { RouteOptions } from 'fastify'
import { FORM, bodyLimitOf, type BoundedSchema } from '../../lib/body-limit.js'
import { ClientInfoSchema } from '../../schemas/marketing.js'
import { ProductSchema } from '../../schemas/product.js'
import { UserSchema } from '../../schemas/user.js'
import { assertError, build, json } from '../helpers/index.js'
import { assertBodyLeftUnread, assertBodyRefused, sendEndlessBodies, sendEndlessBody } from '../helpers/endless-body.js'

// What a body may cost: every stored string and list has a bound in its schema, every route a body
// limit that fits its longest valid body (0 for a route that takes none), and a body the service
// does not read is never read to its end (docs/operations.md, Limits).

/** A character that takes the most bytes in JSON (a surrogate pair, escaped) and in a form. */
const WIDEST = '😀'

/** JSON with every character of every string and key escaped (`\ud83d\ude00`). */
function escapedJson (value: unknown): string {
  if (typeof value === 'string') return `"${Array.from({ length: value.length }, (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`
  if (Array.isArray(value)) return `[${value.map(escapedJson).join(',')}]`
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([key, field]) => `${escapedJson(key)}:${escapedJson(field)}`).join(',')}}`
  return JSON.stringify(value)
}

const longestUser = { name: WIDEST.repeat(256), age: Number.MIN_SAFE_INTEGER, email: WIDEST.repeat(254), registration_date: '2024-02-29' }
const longestClient = { clientName: WIDEST.repeat(256), clientEmail: WIDEST.repeat(254), clientAge: Number.MIN_SAFE_INTEGER, clientInterestedIn: Array<string>(32).fill(WIDEST.repeat(64)) }
const JSON_TYPE = { 'content-type': 'application/json' }

t.test('every route\'s body limit is its body schema\'s, 0 for a route that takes no body', async (t) => {
  const routes: RouteOptions[] = []
  await build(t, {}, { onRoute: (route) => { routes.push(route) } })
  const bodies = routes.filter((route) => route.schema?.body !== undefined || route.schema?.optionalBody !== undefined)
  t.same(bodies.map((route) => `${String(route.method)} ${route.url}`).sort(),
    ['GET /b', 'HEAD /b', 'POST /marketing', 'POST /products', 'POST /users', 'PUT /products/:productid', 'PUT /users/:userid'])
  for (const route of bodies) {
    const schema = (route.schema?.body ?? route.schema?.optionalBody) as BoundedSchema
    const limit = bodyLimitOf(schema, route.schema?.consumes)
    t.ok(Number.isFinite(limit), `${String(route.method)} ${route.url}: every string and list of its body is bounded`)
    t.equal(route.bodyLimit, limit, `${String(route.method)} ${route.url}: ${limit} bytes`)
  }
  for (const route of routes.filter((route) => !bodies.includes(route))) {
    t.equal(route.bodyLimit, 0, `${String(route.method)} ${route.url}: no body`)
  }
})

t.test('the longest valid bodies are taken, in JSON and in a form', async (t) => {
  const app = await build(t)
  const user = escapedJson(longestUser)
  t.ok(user.length > 6000, `a user of ${user.length} bytes`)
  const created = await app.inject({ method: 'POST', url: '/users', headers: JSON_TYPE, payload: user })
  t.equal(created.statusCode, 204)
  t.same(json(await app.inject({ url: String(created.headers.location) })), longestUser, 'stored as sent')
  t.equal((await app.inject({ method: 'PUT', url: String(created.headers.location), headers: JSON_TYPE, payload: user })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url: '/products', headers: JSON_TYPE, payload: escapedJson({ productId: Number.MAX_SAFE_INTEGER, name: WIDEST.repeat(256) }) })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url: '/marketing', headers: JSON_TYPE, payload: escapedJson(longestClient) })).statusCode, 200)

  const encode = (text: string) => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')
  const form = Object.entries(longestClient).flatMap(([key, field]) => [field].flat().map((item) => `${encode(key)}=${encode(String(item))}`)).join('&')
  t.ok(form.length > 32_000, `a form of ${form.length} bytes`)
  const res = await app.inject({ method: 'POST', url: '/marketing', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form })
  t.equal(res.statusCode, 200)
  t.equal(json(res).to, longestClient.clientEmail)
})

t.test('a string or a list past its bound is a 400 that names it', async (t) => {
  const app = await build(t)
  const post = (url: string, payload: object) => app.inject({ method: 'POST', url, payload })
  assertError(t, await post('/users', { ...longestUser, name: 'x'.repeat(257) }), 400, 'body/name must NOT have more than 256 characters')
  assertError(t, await post('/users', { ...longestUser, email: 'x'.repeat(255) }), 400, 'body/email must NOT have more than 254 characters')
  assertError(t, await post('/products', { productId: 1, name: 'x'.repeat(257) }), 400, 'body/name must NOT have more than 256 characters')
  assertError(t, await post('/marketing', { ...longestClient, clientInterestedIn: Array(33).fill('x') }), 400, 'body/clientInterestedIn must NOT have more than 32 items')
  assertError(t, await post('/marketing', { ...longestClient, clientInterestedIn: ['x'.repeat(65)] }), 400, 'body/clientInterestedIn/0 must NOT have more than 64 characters')
  t.equal((await post('/users', { ...longestUser, name: 'x'.repeat(256) })).statusCode, 204, 'at the bound')
})

// Each of these tests waits out the lingering close (lib/lingering-close.ts, LINGER_MS) of the
// connections it refuses a body on: side by side, they wait about once.
t.test('bodies refused over a connection', { jobs: 3 }, async (t) => {
  t.test('a body over its route\'s limit is a 413, by its length before it is read', async (t) => {
    const app = await build(t)
    const limit = bodyLimitOf(UserSchema)
    const user = JSON.stringify({ name: 'Ada', age: 36, email: 'ada@example.com', registration_date: '1815-12-10' })
    const padded = (bytes: number) => user.slice(0, -1) + ' '.repeat(bytes - user.length) + '}'
    t.equal((await app.inject({ method: 'POST', url: '/users', headers: JSON_TYPE, payload: padded(limit) })).statusCode, 204, 'at the limit')
    assertError(t, await app.inject({ method: 'POST', url: '/users', headers: JSON_TYPE, payload: padded(limit + 1) }), 413)
    assertError(t, await app.inject({ method: 'PUT', url: '/products/1', headers: JSON_TYPE, payload: ' '.repeat(bodyLimitOf(ProductSchema) + 1) }), 413)
    assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: JSON_TYPE, payload: ' '.repeat(bodyLimitOf(ClientInfoSchema, [FORM]) + 1) }), 413, 'Request body is too large')

    // An object of 80,000 keys (848 kB) was taken, and parsed for 48 ms of CPU: now refused before
    // a byte of it is read, by its Content-Length.
    const keys = JSON.stringify(Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, i])))
    t.ok(keys.length > 800_000)
    await app.listen({ host: '127.0.0.1', port: 0 })
    const head = `POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${keys.length}\r\n\r\n`
    assertBodyRefused(t, await sendEndlessBody(app, head, Buffer.from(keys.slice(0, 16 * 1024)), { maxBytes: keys.length }), limit, 'the 80,000 keys')
  })

  t.test('a route that takes no body refuses one with 413 before reading it, whatever its length or framing', async (t) => {
    const app = await build(t)
    await app.listen({ host: '127.0.0.1', port: 0 })
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const chunked = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
    const cases = [
      { label: 'GET /hello, 500 MB by Content-Length', head: 'GET /hello?name=x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 500000000\r\n\r\n', chunk },
      { label: 'GET /users, chunked without end', head: 'GET /users HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n', chunk: chunked },
      { label: 'DELETE /users/1, a JSON body', head: 'DELETE /users/1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500000000\r\n\r\n', chunk },
      { label: 'GET /static/, a body of any type', head: 'GET /static/hello.txt HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 500000000\r\n\r\n', chunk }
    ]
    const sent = await sendEndlessBodies(cases.map(({ head, chunk }) => ({ app, head, chunk })))
    for (const [index, { label }] of cases.entries()) {
      assertBodyRefused(t, sent[index]!, 0, label, 'API_ERR_BODY_NOT_ACCEPTED')
      t.match(JSON.parse(sent[index]!.body).message, / takes no request body$/, `${label}: the message says why`)
    }
    t.equal((await app.inject({ url: '/users/1' })).statusCode, 200, 'the DELETE with a body deleted nothing')
    t.equal((await app.inject({ url: '/hello', headers: { 'content-length': '0' } })).statusCode, 200, 'Content-Length: 0 is no body')
    const head = await app.inject({ method: 'HEAD', url: '/hello', headers: { 'content-length': '3' }, payload: 'abc' })
    t.equal(head.statusCode, 413, 'HEAD as GET')
    t.equal(head.body, '', 'HEAD: no body in the answer')
  })

  t.test('an answer given before the body was read leaves the rest of it unread and closes the connection', async (t) => {
    const app = await build(t)
    const off = await build(t, { DOCS_CATCH_ALL: 'false' })
    await Promise.all([app.listen({ host: '127.0.0.1', port: 0 }), off.listen({ host: '127.0.0.1', port: 0 })])
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const big = 'Content-Length: 500000000\r\n\r\n'
    const cases = [
      { label: 'a type the route does not take (415)', server: app, status: 415, head: `POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/foo\r\n${big}` },
      { label: 'no Content-Type (415)', server: app, status: 415, head: `PUT /users/1 HTTP/1.1\r\nHost: localhost\r\n${big}` },
      { label: 'a content coding (415)', server: app, status: 415, head: `POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n${big}` },
      { label: 'no credentials (401)', server: app, status: 401, head: `GET /users/list-all HTTP/1.1\r\nHost: localhost\r\n${big}` },
      { label: 'an Accept the route cannot satisfy (406)', server: app, status: 406, head: `POST /marketing HTTP/1.1\r\nHost: localhost\r\nAccept: text/html\r\nContent-Type: application/json\r\n${big}` },
      { label: 'the description page (200)', server: app, status: 200, head: `POST /nowhere HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n${big}` },
      { label: 'no route (404)', server: off, status: 404, head: `POST /nowhere HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n${big}` },
      { label: 'no such method (405)', server: off, status: 405, head: `PATCH /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${big}` }
    ]
    const sent = await sendEndlessBodies(cases.map(({ server, head }) => ({ app: server, head, chunk })))
    for (const [index, { label, status }] of cases.entries()) assertBodyLeftUnread(t, sent[index]!, 0, label, status)
  })
})
