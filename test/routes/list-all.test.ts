import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { SAMPLE_USERS } from '../../schemas/user.js'
import { assertError, build, json, logSink } from '../helpers/index.js'

/**
 * Production, on the store the suite runs on: production refuses to keep data in memory unless
 * STORE=memory says so, and the PostgreSQL pass (test/groups/01-postgres.ts) gives a database.
 */
const PRODUCTION = { NODE_ENV: 'production', ...(process.env.TEST_STORE === 'postgres' ? {} : { STORE: 'memory' }) }

const PROTECTED = ['/users/list-all', '/list-all/users', '/users/list-all/now']
const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`
const SERVANT = basic('servant:server')
const SAMPLE_JSON = JSON.stringify(SAMPLE_USERS)

function assertChallenge (t: Test, res: LightMyRequestResponse, realm = 'my-realm') {
  assertError(t, res, 401, /authorization/i)
  t.equal(res.headers['www-authenticate'], `Basic realm="${realm}"`, 'challenge')
}

t.test('without credentials: 401 with the Basic challenge', async (t) => {
  const server = await build(t)
  for (const url of PROTECTED) {
    assertChallenge(t, await server.inject({ url }))
    const head = await server.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 401, `HEAD ${url}`)
    t.equal(head.headers['www-authenticate'], 'Basic realm="my-realm"')
  }
})

t.test('with valid credentials: the user store\'s users as JSON', async (t) => {
  const server = await build(t)
  for (const url of PROTECTED) {
    const res = await server.inject({ url, headers: { authorization: SERVANT } })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, SAMPLE_JSON, url)
    t.notOk(res.headers['user-count'], 'User-Count is GET /users\' own')
  }
  t.equal((await server.inject({ url: '/users/list-all/', headers: { authorization: SERVANT } })).body, SAMPLE_JSON, 'trailing slash')
})

t.test('the same store as /users: writes show up', async (t) => {
  const server = await build(t)
  const ada = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
  t.equal((await server.inject({ method: 'POST', url: '/users', payload: ada })).statusCode, 204)
  t.equal((await server.inject({ method: 'DELETE', url: '/user/1' })).statusCode, 204)
  for (const url of PROTECTED) {
    t.same(json(await server.inject({ url, headers: { authorization: SERVANT } })), [SAMPLE_USERS[1], ada], url)
  }
})

t.test('wrong or malformed credentials: 401, never 403 or 500', async (t) => {
  const server = await build(t, { AUTH_FAILURE_LIMIT: '0' })
  const values = [
    basic('servant:wrong'), basic('nobody:server'), basic('servant:'), basic(':server'), basic('servantserver'),
    'Basic', 'Basic ', 'Basic !!!', Buffer.from('servant:server').toString('base64'), `Basic  ${SERVANT.slice(6)}`,
    `basic ${Buffer.from('servant:nope').toString('base64')}`, basic(`servant:${'s'.repeat(10 * 1024)}`), 'Bearer servant'
  ]
  for (const url of PROTECTED) {
    for (const authorization of values) {
      const res = await server.inject({ url, headers: { authorization } })
      t.equal(res.statusCode, 401, `${url} ${authorization.slice(0, 30)}`)
      t.equal(res.headers['www-authenticate'], 'Basic realm="my-realm"')
    }
  }
})

t.test('authentication before content negotiation: 401 first, then 406', async (t) => {
  const server = await build(t)
  for (const url of PROTECTED) {
    assertChallenge(t, await server.inject({ url, headers: { accept: 'text/html' } }))
    assertChallenge(t, await server.inject({ url, headers: { accept: 'text/html', authorization: basic('servant:wrong') } }))
    assertError(t, await server.inject({ url, headers: { accept: 'text/html', authorization: SERVANT } }), 406, 'text/html')
  }
})

t.test('BASIC_AUTH_USERS and AUTH_REALM configure the users and the realm', async (t) => {
  const server = await build(t, { BASIC_AUTH_USERS: 'ada:lovelace,alan:turing', AUTH_REALM: 'staff' })
  for (const url of PROTECTED) {
    t.equal((await server.inject({ url, headers: { authorization: basic('ada:lovelace') } })).statusCode, 200)
    t.equal((await server.inject({ url, headers: { authorization: basic('alan:turing') } })).statusCode, 200)
    assertChallenge(t, await server.inject({ url, headers: { authorization: SERVANT } }), 'staff')
    assertChallenge(t, await server.inject({ url, headers: { authorization: basic('ada:turing') } }), 'staff')
  }
})

t.test('the public GET /users needs no credentials', async (t) => {
  const server = await build(t)
  t.equal((await server.inject({ url: '/users' })).statusCode, 200)
})

t.test('production without BASIC_AUTH_USERS: every credential refused, a warning at start-up', async (t) => {
  const logs = logSink()
  const server = await build(t, { ...PRODUCTION, API_TOKENS: 'tok', AUTH_FAILURE_LIMIT: '0' }, { logger: logs.logger })

  t.match(logs.entries.filter((line) => line.level === 40), [{ msg: /BASIC_AUTH_USERS is not set/ }], 'one warning')
  for (const url of PROTECTED) {
    for (const credentials of ['servant:server', 'admin:admin', 'root:', ':']) {
      assertChallenge(t, await server.inject({ url, headers: { authorization: basic(credentials) } }))
    }
    assertChallenge(t, await server.inject({ url }))
  }
  t.equal((await server.inject({ url: '/users' })).statusCode, 200, 'public routes still answer')
})

t.test('production with BASIC_AUTH_USERS (and API_TOKENS): those users, no warning', async (t) => {
  const logs = logSink('warn')
  const server = await build(t, { ...PRODUCTION, BASIC_AUTH_USERS: 'ops:s3cret', API_TOKENS: 'tok' }, { logger: logs.logger })
  t.same(logs.entries, [])
  t.equal((await server.inject({ url: '/list-all/users', headers: { authorization: basic('ops:s3cret') } })).statusCode, 200)
  assertChallenge(t, await server.inject({ url: '/list-all/users', headers: { authorization: SERVANT } }))
})

t.test('a guesser behind the same address locks out the user name it guesses, not the others', async (t) => {
  const server = await build(t, { BASIC_AUTH_USERS: 'servant:server,ada:lovelace' })
  for (let i = 0; i < 10; i++) assertChallenge(t, await server.inject({ url: '/users/list-all', headers: { authorization: basic(`ada:guess-${i}`) } }))
  for (const url of PROTECTED) {
    t.equal((await server.inject({ url, headers: { authorization: SERVANT } })).body, SAMPLE_JSON, `${url}: servant:server`)
    assertError(t, await server.inject({ url, headers: { authorization: basic('ada:lovelace') } }), 429, /retry in \d+ seconds/)
  }
})
