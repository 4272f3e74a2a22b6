import * as crypto from 'node:crypto'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import collections from '../../plugins/collections/index.js'
import config from '../../plugins/config.js'
import errors from '../../plugins/errors.js'
import auth, { type AuthOptions } from '../../plugins/auth.js'
import { assertError, build, buildPlugins, defaultServerOptions, json, logSink } from '../helpers/index.js'
import { tcpProxy, testPostgres } from '../helpers/postgres.js'
import type { FailureStore } from '../../lib/auth-failures.js'
import { memoryFailureStore } from '../../lib/memory/auth-failures.js'
import { loadConfig } from '../../lib/config/load.js'
import { trustProxyOption } from '../../lib/config/trust-proxy.js'
import { bearerRequired, bearerToken, credentialsVerifier, secretMatcher } from '../../lib/secrets.js'

const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`
const SERVANT = basic('servant:server')

/** Routes made to exercise the plugin: who authenticated, and a route that also validates and negotiates. */
function routes (server: FastifyInstance) {
  server.get('/whoami', { config: { auth: 'basic' } }, async (request) => ({ user: request.authUser }))
  server.get('/open', async (request) => ({ user: request.authUser }))
  server.post('/guarded/:n', {
    schema: {
      produces: ['application/json'],
      params: Type.Object({ n: Type.Integer() }),
      body: Type.Object({ x: Type.Integer() })
    },
    config: { auth: 'basic' },
    // A hook of the route's own: authentication still comes first.
    onRequest: async (request) => { request.log.info('route hook') }
  }, async (request) => ({ user: request.authUser, params: request.params }))
  server.post('/tokened', {
    schema: { produces: ['application/json'], body: Type.Object({ x: Type.Integer() }) },
    config: { auth: 'bearer' }
  }, async () => ({ ok: true }))
}

function assertChallenge (t: Test, res: Awaited<ReturnType<FastifyInstance['inject']>>, challenge = 'Basic realm="my-realm"') {
  assertError(t, res, 401, /authorization/i)
  t.equal(res.headers['www-authenticate'], challenge, 'challenge')
}

/** The auth plugin with only what it needs (the settings of `env`, TRUST_PROXY, the errors, the store), and the routes above. */
async function authServer (t: Test, env: Record<string, string> = {}, options: AuthOptions = {}, logger: FastifyServerOptions['logger'] = false) {
  const settings = loadConfig(env)
  const server = Fastify({ ...defaultServerOptions, trustProxy: trustProxyOption(settings.TRUST_PROXY), logger })
  await server.register(config, { config: settings })
  await server.register(errors)
  await server.register(collections)
  await server.register(auth, options)
  routes(server)
  await server.ready()
  t.teardown(() => server.close())
  return server
}
t.test('valid Basic credentials: the handler gets the authenticated user', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ url: '/whoami', headers: { authorization: SERVANT } })
  t.equal(res.statusCode, 200)
  t.same(json(res), { user: { name: 'servant' } })
  t.same(json(await app.inject({ url: '/whoami', headers: { authorization: `basic ${SERVANT.slice(6)}` } })), { user: { name: 'servant' } },
    'the scheme is case-insensitive (RFC 7235)')
  t.same(json(await app.inject({ url: '/open', headers: { authorization: SERVANT } })), { user: null }, 'a public route authenticates nobody')
})

t.test('several users, colons in passwords and UTF-8 credentials', async (t) => {
  const app = await buildPlugins(t, routes, { BASIC_AUTH_USERS: 'ada:lovelace,bob:a:b:c,zoë:pässwörd' })
  const who = async (credentials: string) => {
    const res = await app.inject({ url: '/whoami', headers: { authorization: basic(credentials) } })
    return res.statusCode === 200 ? json(res).user.name : res.statusCode
  }
  t.equal(await who('ada:lovelace'), 'ada')
  t.equal(await who('bob:a:b:c'), 'bob', 'the password is everything after the first colon')
  t.equal(await who('zoë:pässwörd'), 'zoë', 'UTF-8')
  t.equal(await who('servant:server'), 401, 'the development default is replaced')
  t.equal(await who('ada:a:b:c'), 401, 'one user\'s name with another\'s password')
  t.equal(await who('bob:a:b'), 401)
})

t.test('missing, malformed or wrong credentials: 401 with the challenge, never 500', async (t) => {
  const app = await buildPlugins(t, routes, { AUTH_FAILURE_LIMIT: '0' })
  const values: Array<[string, string | undefined]> = [
    ['no header', undefined],
    ['empty', ''],
    ['Basic with nothing', 'Basic'],
    ['Basic and a space', 'Basic '],
    ['no scheme', Buffer.from('servant:server').toString('base64')],
    ['another scheme', `Bearer ${Buffer.from('servant:server').toString('base64')}`],
    ['bad base64', 'Basic !!!not-base64!!!'],
    ['base64 of garbage', 'Basic AAAA'],
    ['no colon', basic('servantserver')],
    ['empty user', basic(':server')],
    ['empty password', basic('servant:')],
    ['wrong password', basic('servant:servers')],
    ['wrong user', basic('servants:server')],
    ['control character', basic('servant:ser\u0000ver')],
    ['invalid UTF-8', `Basic ${Buffer.from([0x73, 0x65, 0x3a, 0xff, 0xfe]).toString('base64')}`],
    ['extra spaces', `Basic  ${SERVANT.slice(6)}`],
    ['leading space', ` ${SERVANT}`],
    ['trailing garbage', `${SERVANT} extra`],
    ['lowercase scheme, wrong password', `basic ${Buffer.from('servant:nope').toString('base64')}`],
    ['a 10 kB header', basic(`servant:${'x'.repeat(10 * 1024)}`)],
    ['a 10 kB header of garbage', `Basic ${'A'.repeat(10 * 1024)}`]
  ]
  for (const [label, authorization] of values) {
    const res = await app.inject({ url: '/whoami', headers: authorization === undefined ? {} : { authorization } })
    t.test(label, async (t) => assertChallenge(t, res))
  }
})

t.test('AUTH_REALM names the realm of the challenge', async (t) => {
  const app = await buildPlugins(t, routes, { AUTH_REALM: 'staff only' })
  assertChallenge(t, await app.inject({ url: '/whoami' }), 'Basic realm="staff only"')
})

t.test('authentication comes before the route\'s hooks, 406, 415 and 400', async (t) => {
  const app = await buildPlugins(t, routes)
  const guarded = (headers: Record<string, string>, url = '/guarded/1', payload = '{"x":1}') =>
    app.inject({ method: 'POST', url, payload, headers })
  assertChallenge(t, await guarded({ accept: 'text/html', 'content-type': 'application/json' }))
  assertChallenge(t, await guarded({ 'content-type': 'text/plain' }))
  assertChallenge(t, await guarded({ 'content-type': 'application/json' }, '/guarded/abc'))
  assertChallenge(t, await guarded({ 'content-type': 'application/json' }, '/guarded/1', '{"x":"no"}'))
  assertError(t, await guarded({ authorization: SERVANT, accept: 'text/html', 'content-type': 'application/json' }), 406)
  assertError(t, await guarded({ authorization: SERVANT, 'content-type': 'text/plain' }), 415)
  assertError(t, await guarded({ authorization: SERVANT, 'content-type': 'application/json' }, '/guarded/abc'), 400, 'params/n')
  const ok = await guarded({ authorization: SERVANT, 'content-type': 'application/json' })
  t.same(json(ok), { user: { name: 'servant' }, params: { n: 1 } })
})

t.test('the automatic HEAD route is protected too, by one hook that comes first', async (t) => {
  const hooks = new Map<string, string[]>()
  const app = await buildPlugins(t, (server) => {
    // Registered after the plugins: sees each route's final onRequest list.
    server.addHook('onRoute', (route) => {
      if (route.url === '/guarded/:n' || route.url === '/whoami') {
        hooks.set(`${route.method} ${route.url}`, [route.onRequest ?? []].flat().map((hook) => hook.name))
      }
    })
    routes(server)
  })
  // @fastify/compress adds a hook of its own (`onRequest`) to every route, when the route is registered.
  t.same(hooks.get('GET /whoami'), ['requireBasic', 'onRequest', 'refuseBody'])
  t.same(hooks.get('HEAD /whoami'), ['requireBasic', 'onRequest', 'refuseBody'], 'not twice: the HEAD route has its own list')
  t.same(hooks.get('POST /guarded/:n'), ['requireBasic', 'onRequest', 'onRequest', 'negotiate', 'requireSupportedBody'])
  const head = await app.inject({ method: 'HEAD', url: '/whoami' })
  t.equal(head.statusCode, 401)
  t.equal(head.headers['www-authenticate'], 'Basic realm="my-realm"')
  t.equal((await app.inject({ method: 'HEAD', url: '/whoami', headers: { authorization: SERVANT } })).statusCode, 200)
})

t.test('a wrong password takes the same path as an unknown user', async (t) => {
  const compared: Array<[number, number]> = []
  const counting = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push([a.byteLength, b.byteLength])
    return crypto.timingSafeEqual(a, b)
  }
  const verify = credentialsVerifier('ada:lovelace,servant:server,bob:builder', counting)
  const attempt = (user: string, password: string) => {
    compared.length = 0
    return { user: verify(user, password), compared: [...compared] }
  }
  const everything = [[32, 32], [32, 32], [32, 32]]
  const wrongPassword = attempt('servant', 'wrong')
  const unknownUser = attempt('nobody', 'server')
  t.same(wrongPassword.compared, everything, 'a wrong password: one digest compared with every pair')
  t.same(unknownUser.compared, everything, 'an unknown user: the same comparisons')
  t.same(unknownUser, wrongPassword, 'the same answer')
  const first = attempt('ada', 'lovelace')
  t.same(first.user, { name: 'ada' })
  t.same(first.compared, everything, 'a match does not stop the loop early')

  // Over HTTP the two look the same too.
  const server = await authServer(t, { BASIC_AUTH_USERS: 'ada:lovelace,servant:server,bob:builder' })
  const answer = async (credentials: string) => {
    const res = await server.inject({ url: '/whoami', headers: { authorization: basic(credentials) } })
    return { status: res.statusCode, body: res.body, header: res.headers['www-authenticate'] }
  }
  t.same(await answer('nobody:server'), await answer('servant:wrong'), 'the same status, body and challenge')
})

t.test('production without BASIC_AUTH_USERS: a start-up warning, then every credential refused', async (t) => {
  const { entries, logger } = logSink()
  const server = await authServer(t, { NODE_ENV: 'production', STORE: 'memory', API_TOKENS: 'tok' }, {}, logger)

  t.match(entries.filter((entry) => entry.level === 40), [{ msg: /BASIC_AUTH_USERS is not set/ }], 'a warning at start-up')
  for (const credentials of ['servant:server', 'admin:admin', ':', 'a:']) {
    assertChallenge(t, await server.inject({ url: '/whoami', headers: { authorization: basic(credentials) } }))
  }
  assertChallenge(t, await server.inject({ url: '/whoami' }))
})

t.test('outside production, no warning', async (t) => {
  const { entries, logger } = logSink()
  await authServer(t, {}, {}, logger)
  t.same(entries.filter((entry) => Number(entry.level) >= 40), [], 'neither for BASIC_AUTH_USERS nor for API_TOKENS')
})

t.test('credentials never reach the logs', async (t) => {
  const { entries, logger } = logSink('trace')
  const app = await buildPlugins(t, routes, {}, { logger })
  await app.inject({ url: '/whoami', headers: { authorization: basic('servant:topsecret') } })
  await app.inject({ url: '/whoami', headers: { authorization: SERVANT } })
  await app.inject({ method: 'POST', url: '/tokened', headers: { authorization: 'Bearer t0ken' }, payload: { x: 1 } })
  const all = JSON.stringify(entries)
  t.match(all, /request refused/, 'the refusal is logged')
  for (const secret of ['topsecret', Buffer.from('servant:topsecret').toString('base64'), SERVANT.slice(6), 't0ken']) {
    t.notMatch(all, secret)
  }
})

t.test('Bearer tokens, when API_TOKENS is set', async (t) => {
  const app = await buildPlugins(t, routes, { API_TOKENS: 'alpha,beta.2~+/==', AUTH_REALM: 'shop', AUTH_FAILURE_LIMIT: '0' })
  const post = (headers: Record<string, string>, payload = '{"x":1}') =>
    app.inject({ method: 'POST', url: '/tokened', payload, headers: { 'content-type': 'application/json', ...headers } })
  for (const authorization of ['Bearer alpha', 'Bearer beta.2~+/==', 'bearer alpha', 'BEARER alpha']) {
    t.same(json(await post({ authorization })), { ok: true }, authorization)
  }
  for (const authorization of [undefined, '', 'Bearer', 'Bearer ', 'alpha', 'Bearer alph', 'Bearer alphaa', 'Bearer  alpha',
    'Bearer alpha beta', SERVANT, 'Bearer ' + 'a'.repeat(10 * 1024), 'Bearer al pha', 'Bearer "alpha"']) {
    const res = await post(authorization === undefined ? {} : { authorization })
    t.test(`Authorization: ${String(authorization).slice(0, 30)}`, async (t) => assertChallenge(t, res, 'Bearer realm="shop"'))
  }
  assertChallenge(t, await post({ 'content-type': 'text/plain' }), 'Bearer realm="shop"')
  assertChallenge(t, await post({}, '{"x":"no"}'), 'Bearer realm="shop"')
  assertError(t, await post({ authorization: 'Bearer alpha' }, '{"x":"no"}'), 400)
})

t.test('without API_TOKENS, the token header is ignored', async (t) => {
  const app = await buildPlugins(t, routes)
  for (const authorization of [undefined, 'Bearer anything', 'garbage', SERVANT]) {
    const res = await app.inject({ method: 'POST', url: '/tokened', payload: { x: 1 }, headers: authorization === undefined ? {} : { authorization } })
    t.same(json(res), { ok: true }, String(authorization))
  }
})

t.test('secretMatcher compares with every secret and finds the first match', async (t) => {
  const match = secretMatcher(['a', 'b', 'a'])
  t.equal(match('a'), 0)
  t.equal(match('b'), 1)
  t.equal(match('c'), -1)
  t.equal(match(''), -1)
  t.equal(secretMatcher([])('anything'), -1)
})

t.test('credentialsVerifier', async (t) => {
  const verify = credentialsVerifier('ada:lovelace,bob:x:y')
  t.same(verify('ada', 'lovelace'), { name: 'ada' })
  t.same(verify('bob', 'x:y'), { name: 'bob' })
  t.equal(verify('ada', 'x:y'), null)
  t.equal(verify('ada:lovelace', ''), null)
  t.equal(credentialsVerifier(undefined)('servant', 'server'), null, 'no users: nobody')
})

t.test('bearerToken', async (t) => {
  t.equal(bearerToken('Bearer abc'), 'abc')
  t.equal(bearerToken('bearer a.b-c~d+e/f=='), 'a.b-c~d+e/f==')
  t.equal(bearerToken(undefined), undefined)
  t.equal(bearerToken('Bearer'), undefined)
  t.equal(bearerToken('Basic abc'), undefined)
  t.equal(bearerToken('Bearer a=b'), undefined)
})

t.test('bearerRequired: with API_TOKENS, and always in production', async (t) => {
  t.equal(bearerRequired({ NODE_ENV: 'development' }), false)
  t.equal(bearerRequired({ NODE_ENV: 'test' }), false)
  t.equal(bearerRequired({ NODE_ENV: 'development', API_TOKENS: 'a' }), true)
  t.equal(bearerRequired({ NODE_ENV: 'production' }), true)
  t.equal(bearerRequired({ NODE_ENV: 'production', API_TOKENS: 'a' }), true)
})

t.test('production without API_TOKENS: a start-up warning, then every Bearer write refused with the challenge', async (t) => {
  const { entries, logger } = logSink()
  const server = await authServer(t, { NODE_ENV: 'production', STORE: 'memory', BASIC_AUTH_USERS: 'ops:s3cret' }, {}, logger)
  t.match(entries.filter((entry) => entry.level === 40), [{ msg: /API_TOKENS is not set/ }], 'one warning, for API_TOKENS')
  for (const authorization of [undefined, 'Bearer anything', 'Bearer ', 'garbage', SERVANT]) {
    const res = await server.inject({ method: 'POST', url: '/tokened', payload: { x: 1 }, headers: authorization === undefined ? {} : { authorization } })
    t.test(String(authorization), async (t) => assertChallenge(t, res, 'Bearer realm="my-realm"'))
  }
  t.same(json(await server.inject({ url: '/open' })), { user: null }, 'routes without config.auth stay open')
})

t.test('requests without credentials are answered without the failure store', async (t) => {
  const calls: string[] = []
  const inner = memoryFailureStore()
  const spy: FailureStore = {
    read: (keys, now) => { calls.push('read'); return inner.read(keys, now) },
    record: (keys, now, windowMs) => { calls.push('record'); return inner.record(keys, now, windowMs) }
  }
  const server = await authServer(t, { API_TOKENS: 'tok' }, { failureStore: spy })
  for (let i = 0; i < 20; i++) {
    assertChallenge(t, await server.inject({ url: '/whoami' }))
    assertChallenge(t, await server.inject({ method: 'POST', url: '/tokened', payload: { x: 1 } }), 'Bearer realm="my-realm"')
  }
  t.same(calls, [])
  assertChallenge(t, await server.inject({ url: '/whoami', headers: { authorization: basic('servant:wrong') } }))
  t.same(calls, ['read', 'record'], 'credentials are: read before the check, a refusal counted after it')
  t.equal((await server.inject({ url: '/whoami', headers: { authorization: SERVANT } })).statusCode, 200)
  t.same(calls, ['read', 'record', 'read'], 'a success is not counted')
})

t.test('unreadable credentials are counted, together, apart from every user name', async (t) => {
  const server = await authServer(t, { AUTH_FAILURE_LIMIT: '2', API_TOKENS: 'tok' })
  const whoami = (authorization: string) => server.inject({ url: '/whoami', headers: { authorization } })
  const tokened = (authorization: string) => server.inject({ method: 'POST', url: '/tokened', payload: { x: 1 }, headers: { authorization } })
  assertChallenge(t, await whoami('Basic !!!'))
  assertChallenge(t, await tokened('Bearer'), 'Bearer realm="my-realm"')
  for (const res of [await whoami(''), await tokened('tok')]) {
    assertError(t, res, 429, /for these credentials from this address; retry in \d+ seconds/)
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After')
  }
  t.equal((await whoami(SERVANT)).statusCode, 200, 'readable credentials are not refused')
  t.equal((await tokened('Bearer tok')).statusCode, 200)
})

t.test('while the failure counts cannot be read, a waiting attempt gets 503 with Retry-After, not a hang', async (t) => {
  // A store whose first read hangs until the test releases it: an attempt of the same user behind it
  // waits DATABASE_STATEMENT_TIMEOUT (100 ms), then is answered.
  let release!: () => void
  const hung = new Promise<void>((resolve) => { release = resolve })
  let entered!: () => void
  const hanging = new Promise<void>((resolve) => { entered = resolve })
  const inner = memoryFailureStore()
  let reads = 0
  const store: FailureStore = {
    read: async (keys, now) => {
      if (reads++ === 0) {
        entered()
        await hung
      }
      return inner.read(keys, now)
    },
    record: (keys, now, windowMs) => inner.record(keys, now, windowMs)
  }
  const server = await authServer(t, { DATABASE_STATEMENT_TIMEOUT: '100' }, { failureStore: store })
  const first = server.inject({ url: '/whoami', headers: { authorization: basic('servant:wrong') } })
  // Concurrent injections may start in any order: the second is sent once the first is held.
  await hanging
  const waiting = await server.inject({ url: '/whoami', headers: { authorization: SERVANT } })
  assertError(t, waiting, 503, 'The database is unavailable: retry later')
  t.equal(waiting.headers['retry-after'], '5')
  t.equal(json(waiting).code, 'API_ERR_STORE_UNAVAILABLE')
  release()
  assertChallenge(t, await first)
  t.equal((await server.inject({ url: '/whoami', headers: { authorization: SERVANT } })).statusCode, 200, 'then it goes on')
})

t.test('with a database, the failure counts are in it', async (t) => {
  const server = await testPostgres()
  const USERS = { BASIC_AUTH_USERS: 'servant:server,ada:lovelace', AUTH_FAILURE_LIMIT: '4' }
  const login = (app: FastifyInstance, credentials: string) => app.inject({ url: '/users/list-all', headers: { authorization: basic(credentials) } })

  t.test('every replica counts with the others: a guesser cannot spread its guesses over them', async (t) => {
    const url = await server.createDatabase()
    const [a, b] = [await build(t, { DATABASE_URL: url, ...USERS }), await build(t, { DATABASE_URL: url, ...USERS })]
    for (const app of [a, b, a, b]) t.equal((await login(app, 'servant:guess')).statusCode, 401)
    for (const app of [a, b]) {
      assertError(t, await login(app, 'servant:server'), 429, /retry in \d+ seconds/)
      t.equal((await login(app, 'ada:lovelace')).statusCode, 200, 'another user from the same address')
    }
    const restarted = await build(t, { DATABASE_URL: url, ...USERS })
    t.equal((await login(restarted, 'servant:server')).statusCode, 429, 'nor wait for a restart')
  })

  t.test('the database stopped: credentials get 503 with Retry-After within the timeout; no credentials, the challenge', async (t) => {
    const url = await server.createDatabase()
    const proxy = await tcpProxy(t, server.port)
    const app = await build(t, { DATABASE_URL: url.replace(`:${server.port}/`, `:${proxy.port}/`), DATABASE_STATEMENT_TIMEOUT: '1000', ...USERS })
    t.equal((await login(app, 'servant:guess')).statusCode, 401)
    await proxy.stopped()
    const started = Date.now()
    for (const credentials of ['servant:guess', 'servant:server', 'ada:lovelace']) {
      const res = await login(app, credentials)
      assertError(t, res, 503, 'The database is unavailable: retry later')
      t.equal(res.headers['retry-after'], '5', `${credentials}: Retry-After`)
    }
    t.ok(Date.now() - started < 10_000, 'no hang')
    assertError(t, await app.inject({ url: '/users/list-all' }), 401)
    t.equal((await app.inject({ url: '/hello' })).statusCode, 200, 'routes without credentials work')
    proxy.restore()
  })
})

t.test('the memory store\'s table keeps its ceiling under a flood; a lock holds, for a whole IPv6 /64, however the address arrives', async (t) => {
  const server = await authServer(t, { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_ADDRESS_LIMIT: '5', TRUST_PROXY: 'loopback' }, { failureTableEntries: 40 })
  const login = (credentials: string, forwardedFor?: string, remoteAddress?: string) => server.inject({
    url: '/whoami',
    headers: { authorization: basic(credentials), ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    ...(remoteAddress === undefined ? {} : { remoteAddress })
  })
  for (const address of ['2001:db8:0:1::1', '2001:db8:0:1:ffff:ffff:ffff:ffff']) t.equal((await login('servant:guess', address)).statusCode, 401)
  for (let i = 0; i < 5; i++) t.equal((await login(`user-${i}:guess`, `2001:DB8:0:2:${i}::1`)).statusCode, 401)
  await login('servant:guess', '198.51.100.1')

  // Ever-changing addresses, IPv4 and IPv6 /64s: twenty times the keys the table holds.
  for (let i = 0; i < 400; i++) {
    const address = i % 2 === 0 ? `10.0.${i >> 8}.${i & 255}` : `2001:db8:1:${i.toString(16)}::1`
    const res = await login(`user-${i}:guess`, address)
    if (res.statusCode !== 401) t.fail(`address ${i}: ${res.statusCode}`)
  }

  const locked = {
    'another address of the /64, through the proxy': await login('servant:server', '2001:db8:0:1::abcd'),
    'behind two trusted hops': await login('servant:server', '2001:db8:0:1::abcd, 127.0.0.2'),
    'straight from the /64, without a proxy': await login('servant:server', undefined, '2001:db8:0:1::7')
  }
  for (const [label, res] of Object.entries(locked)) {
    t.test(label, async (t) => assertError(t, res, 429, /for these credentials from this address/))
  }
  const ceiling = await login('servant:server', '2001:db8:0:2:ffff::1')
  t.test('the ceiling of a /64, reached from five of its addresses', async (t) => assertError(t, ceiling, 429, /from this address; retry/))
  t.equal((await login('servant:server', '2001:db8:0:3::1')).statusCode, 200, 'another /64 is another client')
  // 198.51.100.1's count, one failure under the limit, was evicted: a second failure does not lock.
  t.equal((await login('servant:guess', undefined, '::ffff:198.51.100.1')).statusCode, 401)
  t.equal((await login('servant:server', '198.51.100.1')).statusCode, 200, 'an evicted count starts again')
  t.equal((await login('servant:guess', '198.51.100.1')).statusCode, 401)
  t.equal((await login('servant:server', undefined, '::ffff:198.51.100.1')).statusCode, 429, 'an IPv4-mapped peer is its IPv4 address')
})

t.test('the memory store\'s table full: attempts it cannot count get 503 with Retry-After, unchecked; clients it holds as usual', async (t) => {
  const { entries, logger } = logSink()
  const server = await authServer(t, { AUTH_FAILURE_LIMIT: '1', TRUST_PROXY: 'loopback' }, { failureTableEntries: 6 }, logger)
  const login = (credentials: string, address: string) =>
    server.inject({ url: '/whoami', headers: { authorization: basic(credentials), 'x-forwarded-for': address } })
  for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) t.equal((await login('servant:guess', address)).statusCode, 401)

  for (const [credentials, address] of [['servant:server', '203.0.113.4'], ['ada:guess', '203.0.113.3'], ['servant:server', '203.0.113.5']]) {
    const res = await login(credentials!, address!)
    assertError(t, res, 503, /The service counts as many failed authentications as it can hold; retry in \d+ seconds/)
    t.equal(json(res).code, 'API_ERR_AUTH_TABLE_FULL')
    const retryAfter = Number(res.headers['retry-after'])
    t.ok(retryAfter >= 1 && retryAfter <= 900, `${credentials} from ${address}: Retry-After ${retryAfter}, until the first window ends`)
  }
  assertError(t, await login('servant:server', '203.0.113.1'), 429, /for these credentials from this address/)
  // Besides each request's own line ('request failed', as for every 503 written for the client).
  const warnings = entries.filter((entry) => entry.level === 40 && entry.msg !== 'request failed')
  t.equal(warnings.length, 1, 'one warning for the three')
  t.match(warnings[0], { msg: /locks fill half the table of counts/, refused: 1 })
  t.equal((await server.inject({ url: '/whoami', headers: { 'x-forwarded-for': '203.0.113.6' } })).statusCode, 401, 'no credentials: the challenge')
})
