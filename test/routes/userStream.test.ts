import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { UserSchema, type User } from '../../schemas/user.js'
import { assertError, baseUrl, build, buildPlugins, logSink, openStream, readLines, until } from '../helpers/index.js'
import { userSequence } from '../../routes/userStream/index.js'
import { USER_STREAM_MAX_COUNT as MAX_COUNT } from '../../schemas/user.js'

// The exact bytes: compact, keys in the order name, age, email, registration_date, LF only.
const ISAAC = '{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"}\n'
const ALBERT = '{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}\n'
const CYCLE = [ISAAC, ALBERT, ALBERT]

/** The body of `count` users of the cycle Isaac, Albert, Albert. */
const expectedBody = (count: number) => Array.from({ length: count }, (_, i) => CYCLE[i % 3]).join('')

t.test('by default: Isaac, Albert, Albert as NDJSON', async (t) => {
  const server = await build(t)
  const res = await server.inject({ url: '/userStream' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/x-ndjson')
  t.equal(res.body, ISAAC + ALBERT + ALBERT, 'exact bytes: one compact object + \\n per user')
  t.notMatch(res.body, /\r/, 'no CR')
  for (const line of res.body.split('\n').slice(0, -1)) {
    t.same(Object.keys(JSON.parse(line)), ['name', 'age', 'email', 'registration_date'], 'key order')
  }
})

t.test('?count=N cycles through Isaac, Albert, Albert', async (t) => {
  const server = await build(t)
  for (const count of [5, 1, 0, 10000]) {
    const res = await server.inject({ url: `/userStream?count=${count}` })
    t.equal(res.statusCode, 200, `count=${count}`)
    t.equal(res.headers['content-type'], 'application/x-ndjson')
    t.equal(res.body, expectedBody(count), `count=${count}: ${count} lines in the cycle order`)
  }
  const empty = await server.inject({ url: '/userStream?count=0' })
  t.equal(empty.body, '', 'count=0: an empty body')
  t.equal((await server.inject({ url: '/userStream?count=%2B2' })).body, expectedBody(2), 'a sign (+, percent-encoded) is allowed')
  t.equal((await server.inject({ url: '/userStream?count=2&count=5' })).body, expectedBody(2), 'the first count wins')
})

t.test('a count that is not an integer from 0 to 10,000,000 is a 400 naming count', async (t) => {
  const server = await build(t)
  for (const count of ['-1', 'abc', '1.5', '1e3', '10000001', '', '0x10', '%201', '99999999999999999999']) {
    assertError(t, await server.inject({ url: `/userStream?count=${count}` }), 400, /querystring\/count/)
  }
  assertError(t, await server.inject({ url: '/userStream?count' }), 400, /querystring\/count/)
})

t.test('Accept: NDJSON by default, the same bytes as application/json, 406 otherwise', async (t) => {
  const server = await build(t)
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'application/x-ndjson'],
    ['*/*', 'application/x-ndjson'],
    ['application/x-ndjson', 'application/x-ndjson'],
    ['application/*', 'application/x-ndjson'],
    ['application/json', 'application/json; charset=utf-8'],
    ['application/x-ndjson;q=0.5, application/json', 'application/json; charset=utf-8']
  ]
  for (const [accept, type] of cases) {
    const res = await server.inject({ url: '/userStream', headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 200, `Accept: ${accept}`)
    t.equal(res.headers['content-type'], type, `Accept: ${accept}`)
    t.equal(res.headers.vary, 'Accept')
    t.equal(res.body, ISAAC + ALBERT + ALBERT, `Accept: ${accept}: the same newline-delimited bytes`)
  }
  for (const accept of ['text/html', 'text/plain', 'application/xml']) {
    assertError(t, await server.inject({ url: '/userStream', headers: { accept } }), 406, accept)
  }
})

/** The service, the users that GET /userStream's source produces counted (its handler's reply.ndjson wrapped). */
async function buildCounted (t: Test) {
  const produced = { users: 0 }
  const server = await build(t, {}, {
    onRoute (route) {
      if (route.url.replace(/\/$/, '') !== '/userStream') return
      const handler = route.handler
      route.handler = function (request, reply) {
        const ndjson = reply.ndjson.bind(reply)
        reply.ndjson = (source, schema) => ndjson((function * () {
          for (const user of source as Iterable<User>) {
            produced.users++
            yield user
          }
        })(), schema)
        return handler.call(this, request, reply)
      }
    }
  })
  return { server, produced }
}

t.test('HEAD: the headers of the GET, no body, nothing produced', async (t) => {
  const { server, produced } = await buildCounted(t)
  const res = await server.inject({ method: 'HEAD', url: '/userStream' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/x-ndjson')
  t.equal(res.body, '')
  const json = await server.inject({ method: 'HEAD', url: '/userStream', headers: { accept: 'application/json' } })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  const max = await server.inject({ method: 'HEAD', url: `/userStream?count=${MAX_COUNT}` })
  t.equal(max.statusCode, 200, 'the largest count is valid')
  t.equal(produced.users, 0, 'and not one user was produced: ten million are not made for a HEAD')
  await server.inject({ url: '/userStream?count=5' })
  t.equal(produced.users, 5, 'as a GET produces them (the count counts)')
  t.equal((await server.inject({ method: 'HEAD', url: '/userStream?count=-1' })).statusCode, 400)
})

t.test('the source is lazy: a generator that cycles, nothing computed ahead', async (t) => {
  const users = userSequence(MAX_COUNT)
  t.notOk(Array.isArray(users), 'not an array')
  t.type(users.next, 'function', 'an iterator')
  const first: User[] = []
  for (const user of users) {
    first.push(user)
    if (first.length === 4) break
  }
  t.same(first.map((user) => user.name), ['Isaac Newton', 'Albert Einstein', 'Albert Einstein', 'Isaac Newton'])
  t.same([...userSequence(0)], [])
})

/** The full service over a real socket, its log lines collected. */
async function listenLogged (t: Test) {
  const logs = logSink()
  const server = await build(t, {}, { logger: logs.logger })
  await server.listen({ port: 0, host: '127.0.0.1' })
  return { server, logs: logs.entries }
}

t.test('count=10000000, a few lines read, the socket destroyed: production stops and the server still answers', async (t) => {
  const { server, logs } = await listenLogged(t)
  const res = await openStream(`${baseUrl(server)}/userStream?count=10000000`)
  t.equal(res.statusCode, 200)
  const lines = await readLines(res, 4)
  t.same(lines.slice(0, 4).map((line) => line + '\n'), [ISAAC, ALBERT, ALBERT, ISAAC], 'the first users')
  res.socket.destroy()

  // The ndjson plugin logs how many items it took from the route's source when the client left.
  const stopped = () => logs.find((entry) => entry.msg === 'ndjson stream stopped early: the connection closed')
  await until(() => stopped() !== undefined)
  const pulled = stopped()?.items as number
  t.ok(pulled < 100_000, `the route's source was pulled ${pulled} times, not 10,000,000`)

  const after = await server.inject({ url: '/userStream' })
  t.equal(after.body, ISAAC + ALBERT + ALBERT, 'the server still answers')
  t.equal((await fetch(`${baseUrl(server)}/userStream?count=2`).then((r) => r.text())), ISAAC + ALBERT, 'over HTTP too')
})

t.test('the route\'s generator, counted through the same plugin, is closed and no longer pulled', async (t) => {
  const state = { pulled: 0, closed: false }
  const counted = (count: number) => (function * () {
    try {
      for (const user of userSequence(count)) {
        state.pulled++
        yield user
      }
    } finally {
      state.closed = true
    }
  })()
  const server = await buildPlugins(t, (server) => {
    server.get('/counted', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
      reply.ndjson(counted(MAX_COUNT), UserSchema))
  })
  await server.listen({ port: 0, host: '127.0.0.1' })

  const res = await openStream(`${baseUrl(server)}/counted`)
  t.same((await readLines(res, 3)).slice(0, 3).map((line) => line + '\n'), CYCLE)
  res.socket.destroy()
  await until(() => state.closed)
  const pulled = state.pulled
  t.ok(pulled < 100_000, `pulled ${pulled} of ${MAX_COUNT}`)
  await sleep(200)
  t.equal(state.pulled, pulled, 'nothing pulled after the client left')
})
