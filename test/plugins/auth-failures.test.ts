import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import auth, { type AuthOptions } from '../../plugins/auth.js'
import collections from '../../plugins/collections/index.js'
import config from '../../plugins/config.js'
import metrics from '../../plugins/edge/metrics.js'
import errors from '../../plugins/errors.js'
import { loadConfig } from '../../lib/config/load.js'
import { trustProxyOption } from '../../lib/config/trust-proxy.js'
import { assertError, build, defaultServerOptions, json, logSink } from '../helpers/index.js'
import { testPostgres } from '../helpers/postgres.js'

// The failed-login limits of plugins/auth.ts against a flood of failures from ever-new IPv6
// networks (issue 42): what one /48 may hold, the room the memory store keeps for the clients that
// behave, and the refusal counted under its cause. The limits one by one: test/plugins/auth.test.ts
// and test/plugins/edge/rate-limit.test.ts; the store's edges: test/lib/memory/auth-failures.test.ts.

const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`

/**
 * The auth plugin on the memory store and the metrics listener, behind one trusted proxy: each
 * request's address is its `X-Forwarded-For`. GET /whoami needs Basic credentials.
 */
async function guarded (t: Test, env: Record<string, string>, options: AuthOptions = {}) {
  const { entries, logger } = logSink()
  const settings = loadConfig({ METRICS_PORT: '0', TRUST_PROXY: '1', BASIC_AUTH_USERS: 'servant:server,ada:lovelace', ...env })
  const server = Fastify({ ...defaultServerOptions, trustProxy: trustProxyOption(settings.TRUST_PROXY), logger })
  await server.register(config, { config: settings })
  await server.register(errors)
  await server.register(metrics)
  await server.register(collections)
  await server.register(auth, options)
  server.get('/whoami', { config: { auth: 'basic' } }, async (request) => ({ user: request.authUser }))
  await server.ready()
  t.teardown(() => server.close())
  const address = entries.find((entry) => entry.msg === 'metrics listening')?.address as AddressInfo
  return {
    entries,
    login: (credentials: string, from: string) => server.inject({ url: '/whoami', headers: { authorization: basic(credentials), 'x-forwarded-for': from } }),
    /** The refusals counted so far, by cause. */
    refused: async () => {
      const text = await (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text()
      return Object.fromEntries([...text.matchAll(/^http_requests_refused_total\{cause="(\w+)"\} (\d+)$/gm)].map(([, cause, n]) => [cause, Number(n)]))
    }
  }
}

t.test('locks from ever-new /48s fill the table\'s half for locks: their next locks get 503, counted as auth_table_full; every client that behaves gets in', async (t) => {
  // 40 entries, room for 20 locks. Each flooding /48 locks one user name from one of its /64s
  // (two failures): a lock and two counts, the /64's and the /48's.
  const { login, refused, entries } = await guarded(t, { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_ADDRESS_LIMIT: '20' }, { failureTableEntries: 40 })
  t.equal((await login('ada:lovelace', '192.0.2.10')).statusCode, 200, 'a client logs in before the flood')
  t.equal((await login('servant:mistyped', '2001:db8:ffff:1::1')).statusCode, 401, 'another mistypes once')
  const statuses = []
  for (let i = 0; i < 40; i++) {
    for (let failure = 0; failure < 2; failure++) statuses.push((await login('servant:guess', `2001:db8:${i}:1::1`)).statusCode)
  }
  t.same(statuses.slice(0, 40), Array(40).fill(401), 'twenty locks')
  t.same(statuses.slice(40), Array(20).fill([401, 503]).flat(), 'then each /48\'s lock-making failure is refused, unchecked')

  // The last /48's count of one failure is held still (the earlier ones' were evicted as new keys came).
  const full = await login('servant:server', '2001:db8:39:1::1')
  assertError(t, full, 503, /as many failed authentications as it can hold; retry in \d+ seconds/)
  t.equal(json(full).code, 'API_ERR_AUTH_TABLE_FULL')
  t.ok(Number(full.headers['retry-after']) >= 1 && Number(full.headers['retry-after']) <= 900, `Retry-After ${full.headers['retry-after']}`)
  t.same(await refused(), { overload: 0, rate_limit: 0, failed_logins: 0, body_too_large: 0, collection_full: 0, stream_limit: 0, auth_table_full: 21 }, 'counted under their own cause')
  t.match(entries.filter((entry) => entry.level === 40 && entry.msg !== 'request failed'), [{ msg: /locks fill half the table of counts/, refused: 1 }], 'and logged, once')

  t.equal((await login('ada:lovelace', '192.0.2.10')).statusCode, 200, 'the client that logged in before')
  t.equal((await login('servant:server', '2001:db8:ffff:1::1')).statusCode, 200, 'the client that mistyped once')
  t.equal((await login('servant:server', '198.51.100.7')).statusCode, 200, 'an IPv4 client that never failed')
  t.equal((await login('ada:lovelace', '2001:db8:0:2::1')).statusCode, 200, 'a client of a flooding /48, from a /64 the flood did not use')
  t.equal((await login('ada:lovelace', '2001:db8:0:1::2')).statusCode, 200, 'another user name from a flooding /64')
  t.equal((await login('ada:wrong', '203.0.113.9')).statusCode, 401, 'a new client\'s failure is counted')
  assertError(t, await login('servant:server', '2001:db8:0:1::1'), 429, /for these credentials from this address/)
})

t.test('one /48 cannot fill the table: past AUTH_FAILURE_NETWORK_LIMIT every address of it gets 429, other networks none', async (t) => {
  const { login, refused } = await guarded(t, { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_ADDRESS_LIMIT: '20', AUTH_FAILURE_NETWORK_LIMIT: '30' }, { failureTableEntries: 1000 })
  const statuses = []
  for (let i = 0; i < 100; i++) statuses.push((await login(`user-${i % 2}:guess`, `2001:db8:aa:${i >> 1}::1`)).statusCode)
  t.same(statuses, [...Array(30).fill(401), ...Array(70).fill(429)], 'thirty failures, over fifteen /64s, then none counted')
  const network = await login('servant:server', '2001:db8:aa:ffff::1')
  assertError(t, network, 429, /Too many failed authentications from this network; retry in \d+ seconds/)
  t.equal(json(network).code, 'API_ERR_AUTH_RATE_LIMITED')
  t.ok(Number(network.headers['retry-after']) > 890, 'until the /48\'s window ends')
  t.equal((await login('servant:server', '2001:db8:ab:1::1')).statusCode, 200, 'the next /48')
  t.equal((await login('servant:server', '198.51.100.7')).statusCode, 200, 'an IPv4 client')
  t.same(await refused(), { overload: 0, rate_limit: 0, failed_logins: 71, body_too_large: 0, collection_full: 0, stream_limit: 0, auth_table_full: 0 }, 'failed_logins, as the other limits')
})

t.test('AUTH_FAILURE_NETWORK_LIMIT=0: no ceiling for a network', async (t) => {
  const { login } = await guarded(t, { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_ADDRESS_LIMIT: '2', AUTH_FAILURE_NETWORK_LIMIT: '0' })
  for (let i = 0; i < 50; i++) t.equal((await login('servant:guess', `2001:db8:aa:${i}::1`)).statusCode, 401)
  t.equal((await login('servant:server', '2001:db8:aa:ffff::1')).statusCode, 200)
})

t.test('with a database, the ceiling of a network holds too, across replicas; no table to fill', async (t) => {
  const url = await (await testPostgres()).createDatabase()
  const env = { DATABASE_URL: url, TRUST_PROXY: '1', BASIC_AUTH_USERS: 'servant:server', AUTH_FAILURE_NETWORK_LIMIT: '4' }
  const [a, b] = [await build(t, env), await build(t, env)]
  const login = (app: FastifyInstance, credentials: string, from: string) =>
    app.inject({ url: '/users/list-all', headers: { authorization: basic(credentials), 'x-forwarded-for': from } })
  for (const [i, app] of [a, b, a, b].entries()) t.equal((await login(app!, 'servant:guess', `2001:db8:cc:${i}::1`)).statusCode, 401)
  for (const app of [a!, b!]) assertError(t, await login(app, 'servant:server', '2001:db8:cc:ff::1'), 429, /from this network/)
  t.equal((await login(a!, 'servant:server', '2001:db8:cd:1::1')).statusCode, 200, 'another /48')
})
