import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { advanceClock, assertError, build, json, uncheckedInject } from '../../helpers/index.js'

const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`
const GOOD = basic('servant:server')
const WRONG = basic('servant:guess')
const ADA = basic('ada:lovelace')
const USERS = { BASIC_AUTH_USERS: 'servant:server,ada:lovelace' }

/** The app with TRUST_PROXY applied, as server.ts builds it: the client address depends on it. */
const serve = build

/** A 429 JSON error with a Retry-After in whole seconds, at most `windowSeconds`. */
function assertTooMany (t: Test, res: LightMyRequestResponse, windowSeconds: number, code: string) {
  assertError(t, res, 429, /retry in \d+ seconds/)
  t.equal(json(res).code, code)
  const retryAfter = Number(res.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After: ${retryAfter}`)
}

t.test('after AUTH_FAILURE_LIMIT failures for a user name, that name gets 429 from that address, even with the right password', async (t) => {
  const server = await serve(t, { ...USERS, API_TOKENS: 'tok-one' })
  const login = (authorization: string, url = '/users/list-all') => server.inject({ url, headers: { authorization } })
  for (let i = 1; i <= 10; i++) t.equal((await login(WRONG)).statusCode, 401, `failure ${i}: 401`)
  assertTooMany(t, await login(WRONG), 900, 'API_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await login(GOOD), 900, 'API_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await login(GOOD, '/list-all/users'), 900, 'API_ERR_AUTH_RATE_LIMITED')
  t.equal((await login(ADA)).statusCode, 200, 'another user from the same address (behind the same NAT) signs in')
  t.equal((await login(basic('ada:wrong'))).statusCode, 401, 'and is counted on its own')
  assertError(t, await server.inject({ url: '/users/list-all' }), 401, /authorization/i)
  t.equal((await server.inject({ url: '/users' })).statusCode, 200, 'public routes are not affected')
  const write = await server.inject({ method: 'POST', url: '/products', headers: { authorization: 'Bearer tok-one' }, payload: { productId: 1 } })
  t.equal(write.statusCode, 204, 'nor are Bearer writes from the address')
})

t.test('a guesser of another user name does not lock out the right credentials from its address', async (t) => {
  const server = await serve(t)
  for (let i = 0; i < 30; i++) await server.inject({ url: '/users/list-all', headers: { authorization: basic(`admin:guess-${i}`) } })
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 200, 'curl -u servant:server')
})

t.test('after AUTH_FAILURE_ADDRESS_LIMIT failures over any user names, the address gets 429 on every protected route', async (t) => {
  const server = await serve(t, { ...USERS, API_TOKENS: 'tok-one', TRUST_PROXY: '1' })
  const from = (address: string, authorization: string, url = '/users/list-all') =>
    server.inject({ url, headers: { authorization, 'x-forwarded-for': address } })
  for (let i = 0; i < 100; i++) {
    const res = await from('203.0.113.7', basic(`user-${i % 30}:guess-${i}`))
    if (res.statusCode !== 401) t.fail(`failure ${i}: ${res.statusCode}`)
  }
  assertTooMany(t, await from('203.0.113.7', GOOD), 900, 'API_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await from('203.0.113.7', ADA), 900, 'API_ERR_AUTH_RATE_LIMITED')
  t.match(json(await from('203.0.113.7', ADA)).message, /from this address/)
  const write = await server.inject({ method: 'POST', url: '/products', headers: { authorization: 'Bearer tok-one', 'x-forwarded-for': '203.0.113.7' }, payload: { productId: 1 } })
  assertTooMany(t, write, 900, 'API_ERR_AUTH_RATE_LIMITED')
  t.equal((await from('203.0.113.8', GOOD)).statusCode, 200, 'another address is not affected')
})

t.test('successes and requests without credentials are not counted; unreadable credentials are, on their own', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '2' })
  for (let i = 0; i < 20; i++) {
    t.equal((await server.inject({ url: '/users/list-all' })).statusCode, 401, 'no credentials: the challenge')
    t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 200)
  }
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: 'Basic !!!' } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: 'Basic' } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: 'Basic ???' } })).statusCode, 429, 'unreadable credentials count')
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })).statusCode, 401)
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 429, 'wrong passwords count')
})

t.test('Bearer tokens on /products writes count as well, each token as its own user name', async (t) => {
  const server = await serve(t, { API_TOKENS: 'tok-one', AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_ADDRESS_LIMIT: '5' })
  const post = (authorization: string) => server.inject({
    method: 'POST', url: '/products', headers: { authorization, 'content-type': 'application/json' }, payload: { productId: 1 }
  })
  for (let i = 0; i < 3; i++) t.equal((await post('Bearer stale')).statusCode, 401)
  assertTooMany(t, await post('Bearer stale'), 900, 'API_ERR_AUTH_RATE_LIMITED')
  t.equal((await post('Bearer tok-one')).statusCode, 204, 'a client stuck on a wrong token does not lock out the right one')
  for (const token of ['Bearer a', 'Bearer b']) t.equal((await post(token)).statusCode, 401)
  assertTooMany(t, await post('Bearer tok-one'), 900, 'API_ERR_AUTH_RATE_LIMITED')
  assertTooMany(t, await server.inject({ method: 'DELETE', url: '/products/1', headers: { authorization: 'Bearer tok-one' } }), 900, 'API_ERR_AUTH_RATE_LIMITED')
})

t.test('the window ends: the user name may be tried again', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '1', AUTH_FAILURE_WINDOW_MS: '60000' })
  const login = (authorization: string) => server.inject({ url: '/users/list-all', headers: { authorization } })
  t.equal((await login(WRONG)).statusCode, 401)
  t.equal((await login(GOOD)).statusCode, 429)
  advanceClock(t, 50_000)
  const refused = await login(GOOD)
  t.equal(refused.statusCode, 429, '10 s before the window ends')
  t.equal(refused.headers['retry-after'], '10')
  advanceClock(t, 10_000)
  t.equal((await login(GOOD)).statusCode, 200, 'once it has ended')
})

t.test('concurrent guesses get no more than the limit checked', async (t) => {
  const server = await serve(t)
  const answers = await Promise.all(Array.from({ length: 40 }, () => server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })))
  t.same(answers.map((res) => res.statusCode).sort(), [...Array(10).fill(401), ...Array(30).fill(429)])
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 429)
})

t.test('failures from thousands of other addresses erase nothing', async (t) => {
  const server = await serve(t, { TRUST_PROXY: '1', AUTH_FAILURE_LIMIT: '1' })
  const inject = uncheckedInject(server)
  const from = (address: string, authorization: string) => inject({ url: '/users/list-all', headers: { authorization, 'x-forwarded-for': address } })
  t.equal((await from('198.51.100.1', WRONG)).statusCode, 401)
  t.equal((await from('198.51.100.1', GOOD)).statusCode, 429)
  // More than @fastify/rate-limit's in-memory store keeps (an LRU of 5,000 keys).
  for (let i = 0; i < 6000; i++) {
    const res = await from(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, WRONG)
    if (res.statusCode !== 401) t.fail(`address ${i}: ${res.statusCode}`)
  }
  t.equal((await from('198.51.100.1', GOOD)).statusCode, 429, 'the first address is still refused')
})

t.test('the client address is X-Forwarded-For only when TRUST_PROXY trusts the proxy; an IPv6 client is its /64', async (t) => {
  const from = (address: string, authorization: string) => ({ url: '/users/list-all', headers: { authorization, 'x-forwarded-for': address } })

  const trusting = await serve(t, { AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: '1' })
  for (let i = 0; i < 2; i++) await trusting.inject(from('203.0.113.7', WRONG))
  t.equal((await trusting.inject(from('203.0.113.7', GOOD))).statusCode, 429, 'the guessing client is refused')
  t.equal((await trusting.inject(from('203.0.113.8', GOOD))).statusCode, 200, 'another client behind the same proxy is not')

  await trusting.inject(from('2001:db8:0:1::1', WRONG))
  await trusting.inject(from('2001:db8:0:1::2', WRONG))
  t.equal((await trusting.inject(from('2001:db8:0:1:ffff::3', GOOD))).statusCode, 429, 'addresses of one /64 are one client')
  t.equal((await trusting.inject(from('2001:db8:0:2::1', GOOD))).statusCode, 200, 'another /64 is another')

  const distrusting = await serve(t, { AUTH_FAILURE_LIMIT: '2' })
  await distrusting.inject(from('203.0.113.7', WRONG))
  await distrusting.inject(from('203.0.113.9', WRONG))
  t.equal((await distrusting.inject(from('203.0.113.10', GOOD))).statusCode, 429, 'an untrusted X-Forwarded-For changes nothing')
})

t.test('AUTH_FAILURE_LIMIT=0 and AUTH_FAILURE_ADDRESS_LIMIT=0: no limit', async (t) => {
  const server = await serve(t, { AUTH_FAILURE_LIMIT: '0', AUTH_FAILURE_ADDRESS_LIMIT: '0' })
  for (let i = 0; i < 30; i++) await server.inject({ url: '/users/list-all', headers: { authorization: WRONG } })
  for (let i = 0; i < 120; i++) await server.inject({ url: '/users/list-all', headers: { authorization: basic(`user-${i}:x`) } })
  t.equal((await server.inject({ url: '/users/list-all', headers: { authorization: GOOD } })).statusCode, 200)
  t.notOk((await server.inject({ url: '/users/list-all' })).headers['retry-after'])
})

t.test('RATE_LIMIT_MAX: a global limit per address on every route but the probes, off by default', async (t) => {
  const open = await serve(t)
  for (let i = 0; i < 200; i++) {
    const res = await open.inject({ url: '/hello' })
    if (res.statusCode !== 200) t.fail(`request ${i}: ${res.statusCode}`)
  }
  t.notOk((await open.inject({ url: '/hello' })).headers['x-ratelimit-limit'], 'off by default')

  const limited = await serve(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000', TRUST_PROXY: '1' })
  const get = (url: string, address: string) => limited.inject({ url, headers: { 'x-forwarded-for': address } })
  const hello = (address: string) => get('/hello', address)
  for (let i = 1; i <= 3; i++) {
    const res = await hello('198.51.100.1')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-remaining'], String(3 - i))
  }
  const refused = await hello('198.51.100.1')
  assertTooMany(t, refused, 60, 'API_ERR_RATE_LIMITED')
  t.match(json(refused).message, /at most 3 in 60 seconds/)
  t.equal((await get('/users/7', '198.51.100.1')).statusCode, 429, 'every route')
  for (let i = 0; i < 10; i++) {
    for (const probe of ['/health', '/ready']) {
      const res = await get(probe, '198.51.100.1')
      if (res.statusCode !== 200 || res.headers['x-ratelimit-limit'] !== undefined) t.fail(`${probe} ${i}: ${res.statusCode}`)
    }
  }
  t.pass('the probes are never limited, nor counted')
  t.equal((await hello('198.51.100.2')).statusCode, 200, 'per address')

  for (let i = 0; i < 3; i++) await hello(`2001:db8:0:1::${i + 1}`)
  t.equal((await hello('2001:db8:0:1::99')).statusCode, 429, 'an IPv6 client is its /64')
  t.equal((await hello('2001:db8:0:2::1')).statusCode, 200)
})
