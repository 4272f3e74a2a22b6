import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertError, build, buildPlugins } from '../../helpers/index.js'

const SHOP = 'https://shop.example'
const preflight = (url: string, origin: string, method = 'PUT', headers = 'content-type, authorization') => ({
  method: 'OPTIONS' as const,
  url,
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers }
})

/** A preflight answer: 204, empty, the methods and headers the API takes, never the description page. */
function assertPreflight (t: Test, res: LightMyRequestResponse) {
  t.equal(res.statusCode, 204, 'a preflight answer')
  t.equal(res.body, '', 'no body: not the description page')
  t.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, DELETE')
  t.equal(res.headers['access-control-max-age'], '600')
  t.match(res.headers['x-request-id'], /./)
}

t.test('no origin allowed by default: a preflight is answered as one, and allows nothing', async (t) => {
  const app = await build(t) // DOCS_CATCH_ALL on: unknown paths and methods get the page
  for (const url of ['/users/1', '/no-such-path']) {
    const res = await app.inject(preflight(url, SHOP))
    assertPreflight(t, res)
    t.notOk(res.headers['access-control-allow-origin'], `${url}: no origin allowed`)
  }
  const simple = await app.inject({ url: '/hello', headers: { origin: SHOP } })
  t.equal(simple.statusCode, 200)
  t.notOk(simple.headers['access-control-allow-origin'])
  t.notOk(simple.headers['access-control-expose-headers'], 'nothing to expose to an origin that may not read')
  t.notOk(simple.headers.vary, 'the answer is the same whatever the origin')
})

t.test('CORS_ORIGINS: a listed origin is allowed, others are not', async (t) => {
  const app = await build(t, { CORS_ORIGINS: `${SHOP}, http://localhost:8080`, API_TOKENS: 'tok' })
  const allowed = await app.inject(preflight('/products/7', SHOP))
  assertPreflight(t, allowed)
  t.equal(allowed.headers['access-control-allow-origin'], SHOP)
  t.equal(allowed.headers['access-control-allow-headers'], 'content-type, authorization', 'the requested headers')
  t.match(allowed.headers.vary, /Origin/)
  t.equal((await app.inject(preflight('/users', 'http://localhost:8080', 'POST'))).headers['access-control-allow-origin'], 'http://localhost:8080')

  const other = await app.inject(preflight('/products/7', 'https://evil.example'))
  assertPreflight(t, other)
  t.notOk(other.headers['access-control-allow-origin'], 'another origin: no Allow-Origin')

  const get = await app.inject({ url: '/users', headers: { origin: SHOP } })
  t.equal(get.headers['access-control-allow-origin'], SHOP)
  t.match(get.headers['access-control-expose-headers'], /\bX-Request-Id\b/)
  t.match(get.headers['access-control-expose-headers'], /\bUser-Count\b/)
  t.equal(get.headers.vary, 'Origin, Accept')

  const refused = await app.inject({ method: 'POST', url: '/products', headers: { origin: SHOP, 'content-type': 'application/json' }, payload: '{}' })
  assertError(t, refused, 401)
  t.equal(refused.headers['access-control-allow-origin'], SHOP, 'errors carry it too: a script can read them')
  t.match(refused.headers['access-control-expose-headers'], /\bWWW-Authenticate\b/)

  const noOrigin = await app.inject({ url: '/users' })
  t.notOk(noOrigin.headers['access-control-allow-origin'], 'not a CORS request: no origin allowed')
  t.notOk(noOrigin.headers['access-control-expose-headers'], 'not a CORS request: nothing exposed')
  t.equal(noOrigin.headers.vary, 'Origin, Accept', 'the answer still varies with Origin')
  const otherSimple = await app.inject({ url: '/hello', headers: { origin: 'https://evil.example' } })
  t.notOk(otherSimple.headers['access-control-allow-origin'], 'another origin: nothing allowed')
  t.notOk(otherSimple.headers['access-control-expose-headers'], 'another origin: nothing exposed')
  t.equal(otherSimple.headers.vary, 'Origin')
})

t.test('CORS_ORIGINS=*: any origin', async (t) => {
  const app = await build(t, { CORS_ORIGINS: '*' })
  t.equal((await app.inject(preflight('/users', 'https://anyone.example', 'POST'))).headers['access-control-allow-origin'], '*')
  const simple = await app.inject({ url: '/hello', headers: { origin: 'https://anyone.example' } })
  t.equal(simple.headers['access-control-allow-origin'], '*')
  t.match(simple.headers['access-control-expose-headers'], /\bX-Request-Id\b/)
  t.notOk(simple.headers.vary, 'the same answer for every origin')
  const noOrigin = await app.inject({ url: '/hello' })
  t.notOk(noOrigin.headers['access-control-allow-origin'], 'not a CORS request')
  t.notOk(noOrigin.headers['access-control-expose-headers'], 'not a CORS request')
})

t.test('an OPTIONS request that is not a preflight is a method the path does not have', async (t) => {
  const off = await build(t, { DOCS_CATCH_ALL: 'false', CORS_ORIGINS: SHOP })
  for (const headers of [{}, { origin: SHOP }, { 'access-control-request-method': 'GET' }]) {
    const res = await off.inject({ method: 'OPTIONS', url: '/hello', headers })
    assertError(t, res, 405)
    t.equal(res.headers.allow, 'GET, HEAD')
  }
  assertError(t, await off.inject({ method: 'OPTIONS', url: '/no-such-path' }), 404)

  const on = await build(t, { DOCS_CATCH_ALL: 'true' })
  const page = await on.inject({ method: 'OPTIONS', url: '/hello' })
  t.equal(page.statusCode, 200, 'with the catch-all: the description page, like any wrong method')
  t.match(page.body, /^# servant-example-api/)
})

const exposedOf = (res: LightMyRequestResponse) => String(res.headers['access-control-expose-headers']).split(', ')

t.test('the exposed headers are those the routes\' response schemas declare, and the request id; none safelisted', async (t) => {
  const app = await build(t, { CORS_ORIGINS: SHOP, API_TOKENS: 'tok', RATE_LIMIT_MAX: '1000' })
  const document = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>> }
  const declared = new Set(Object.values(document.paths).flatMap((path) => Object.values(path))
    .flatMap((operation) => Object.values(operation.responses ?? {})).flatMap((response) => Object.keys(response.headers ?? {})))
  t.ok(declared.has('User-Count') && declared.has('WWW-Authenticate') && declared.has('Retry-After'), 'the routes\' own headers and those plugins add')
  // Cache-Control and Last-Modified (GET /static/) a script reads without being told (Fetch standard).
  const safelisted = ['Cache-Control', 'Last-Modified']
  t.ok(safelisted.every((name) => declared.has(name)))
  const expected = [...declared].filter((name) => !safelisted.includes(name)).concat('X-Request-Id').sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()))
  for (const url of ['/hello', '/no-such-path']) t.same(exposedOf(await app.inject({ url, headers: { origin: SHOP } })), expected, url)
  t.same(exposedOf(await app.inject(preflight('/users', SHOP))), expected, 'a preflight says the same, as @fastify/cors would')
})

t.test('a header added to a route\'s response schema is exposed, also when a later plugin adds the response', async (t) => {
  const app = await buildPlugins(t, (server) => {
    server.addHook('onRoute', (route) => {
      if (route.url === '/shiny') route.schema = { ...route.schema, response: { ...route.schema?.response as object, 418: { type: 'null', headers: { 'X-Teapot': { type: 'string' } } } } }
    })
    server.get('/shiny', {
      schema: { response: { 200: { type: 'string', headers: { type: 'object', properties: { 'X-Shiny': { type: 'string' }, 'x-request-id': { type: 'string' } } } } } }
    }, async (_request, reply) => reply.header('x-shiny', 'yes').send('shiny'))
  }, { CORS_ORIGINS: '*' })
  const res = await app.inject({ url: '/shiny', headers: { origin: SHOP } })
  t.equal(res.statusCode, 200)
  t.ok(exposedOf(res).includes('X-Shiny'), 'declared by the route')
  t.ok(exposedOf(res).includes('X-Teapot'), 'added by an onRoute hook registered after CORS')
  t.equal(exposedOf(res).filter((name) => name.toLowerCase() === 'x-request-id').length, 1, 'each header once, whatever its case')
})
