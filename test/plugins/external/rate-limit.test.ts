import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { advanceClock, assertError, build, json } from '../../helpers/index.js'

const GOOD = `Basic ${Buffer.from('servant:server').toString('base64')}`
const WRONG = `Basic ${Buffer.from('servant:guess').toString('base64')}`

/** The app with TRUST_PROXY applied, as server.ts builds it: the client address depends on it. */
const serve = build

/** A 429 JSON error with a Retry-After in whole seconds, at most `windowSeconds`. */
function assertTooMany (t: Test, res: LightMyRequestResponse, windowSeconds: number, code: string) {
  assertError(t, res, 429, /retry in \d+ seconds/)
  t.equal(json(res).code, code)
  const retryAfter = Number(res.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After: ${retryAfter}`)
}

t.test('after AUTH_FAILURE_LIMIT failed logins an address gets 429, even with the right password', async (t) => {
  const server = await serve(t)
  const login = (authorization: string) => server.inject({ url: '/users/list-all', headers: { authorization } })
  for (let i = 1; i <= 10; i++) t.equal((await login(WRONG)).statusCode, 401, `failure ${i}: 401`)
  assertTooMany(t, await login(WRONG), 900, 'FST_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await login(GOOD), 900, 'FST_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await server.inject({ url: '/list-all/users' }), 900, 'FST_ERR_AUTH_RATE_LIMITED')
  t.equal((await server.inject({ url: '/users' })).statusCode, 200, 'public routes are not affected')
})

t.test('successes and requests without credentials are not counted', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '2' })
  for (let i = 0; i < 20; i++) {
    t.equal((await server.inject({ url: '/users/list-all' })).statusCode, 401, 'no credentials: the challenge')
    t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 200)
  }
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: 'Basic !!!' } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 429, 'malformed credentials count')
})

t.test('Bearer tokens on /products writes count as well', async (t) => {
  const server = await serve(t, { API_TOKENS: 'tok-one', AUTH_FAILURE_LIMIT: '3' })
  const post = (authorization: string) => server.inject({
    method: 'POST', url: '/products', headers: { authorization, 'content-type': 'application/json' }, payload: { productId: 1 }
  })
  for (const token of ['Bearer a', 'Bearer b', 'Bearer c']) t.equal((await post(token)).statusCode, 401)
  assertTooMany(t, await post('Bearer tok-one'), 900, 'FST_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await server.inject({ method: 'DELETE', url: '/products/1', headers: { authorization: 'Bearer tok-one' } }), 900, 'FST_ERR_AUTH_RATE_LIMITED')
})

t.test('the window ends: the address may try again', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '1', AUTH_FAILURE_WINDOW_MS: '60000' })
  const login = (authorization: string) => server.inject({ url: '/users/list-all', headers: { authorization } })
  t.equal((await login(WRONG)).statusCode, 401)
  t.equal((await login(GOOD)).statusCode, 429)
  advanceClock(t, 50_000)
  t.equal((await login(GOOD)).statusCode, 429, '10 s before the window ends')
  advanceClock(t, 10_000)
  t.equal((await login(GOOD)).statusCode, 200, 'once it has ended')
})

t.test('the client address is X-Forwarded-For only when TRUST_PROXY trusts the proxy', async (t) => {
  const from = (address: string, authorization: string) => ({ url: '/users/list-all', headers: { authorization, 'x-forwarded-for': address } })

  const trusting = await serve(t, { AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: '1' })
  for (let i = 0; i < 2; i++) await trusting.inject(from('203.0.113.7', WRONG))
  t.equal((await trusting.inject(from('203.0.113.7', GOOD))).statusCode, 429, 'the guessing client is refused')
  t.equal((await trusting.inject(from('203.0.113.8', GOOD))).statusCode, 200, 'another client behind the same proxy is not')

  const distrusting = await serve(t, { AUTH_FAILURE_LIMIT: '2' })
  await distrusting.inject(from('203.0.113.7', WRONG))
  await distrusting.inject(from('203.0.113.9', WRONG))
  t.equal((await distrusting.inject(from('203.0.113.10', GOOD))).statusCode, 429, 'an untrusted X-Forwarded-For changes nothing')
})

t.test('AUTH_FAILURE_LIMIT=0: no limit', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '0' })
  for (let i = 0; i < 30; i++) await server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 200)
})

t.test('RATE_LIMIT_MAX: a global limit per address on every route, off by default', async (t) => {
  const open = await serve(t)
  for (let i = 0; i < 200; i++) {
    const res = await open.inject({ url: '/hello' })
    if (res.statusCode !== 200) t.fail(`request ${i}: ${res.statusCode}`)
  }
  t.notOk((await open.inject({ url: '/hello' })).headers['x-ratelimit-limit'], 'off by default')

  const limited = await serve(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000', TRUST_PROXY: '1' })
  const hello = (address: string) => limited.inject({ url: '/hello', headers: { 'x-forwarded-for': address } })
  for (let i = 1; i <= 3; i++) {
    const res = await hello('198.51.100.1')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-remaining'], String(3 - i))
  }
  const refused = await hello('198.51.100.1')
  assertTooMany(t, refused, 60, 'FST_ERR_RATE_LIMITED')
  t.match(json(refused).message, /at most 3 in 60 seconds/)
  t.equal((await limited.inject({ url: '/users/7', headers: { 'x-forwarded-for': '198.51.100.1' } })).statusCode, 429, 'every route')
  t.equal((await hello('198.51.100.2')).statusCode, 200, 'per address')
})
