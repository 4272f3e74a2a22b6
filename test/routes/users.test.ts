import t from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ALBERT, ISAAC, SAMPLE_USERS, type User } from '../../schemas/user.js'
import { renderUsersForm, renderUsersText, sortUsers } from '../../routes/users/listing.js'
import { assertError, build, json } from '../helpers/index.js'

const ADA: User = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
const SAMPLE_JSON = '[{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"},' +
  '{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}]'

function post (app: FastifyInstance, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/users', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } })
}

async function create (app: FastifyInstance, user: User): Promise<number> {
  const res = await post(app, user)
  const id = /^\/users\/(\d+)$/.exec(String(res.headers.location))?.[1]
  if (res.statusCode !== 204 || id === undefined) throw new Error(`POST /users: ${res.statusCode} ${res.body}`)
  return Number(id)
}

const users = (res: LightMyRequestResponse) => json<User[]>(res)

t.test('GET /users: the sample users in id order, as JSON, with User-Count', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/users' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, SAMPLE_JSON, 'exact bytes, fields in table order')
  t.equal(res.headers['user-count'], '2')
  t.equal(res.headers.vary, 'Accept')
  t.equal((await app.inject({ url: '/users/' })).body, SAMPLE_JSON, 'trailing slash')
})

t.test('GET /users/1 is Isaac Newton and /users/2 Albert Einstein', async (t) => {
  const app = await build(t)
  t.same(json(await app.inject({ url: '/users/1' })), ISAAC)
  t.same(json(await app.inject({ url: '/users/2' })), ALBERT)
  assertError(t, await app.inject({ url: '/users/3' }), 404, 'No user with userid 3')
})

t.test('each app has its own store', async (t) => {
  const first = await build(t)
  await create(first, ADA)
  const second = await build(t)
  t.equal((await second.inject({ url: '/users' })).body, SAMPLE_JSON)
  t.equal((await first.inject({ url: '/users' })).headers['user-count'], '3')
})

t.test('sortby=age and sortby=name: ascending, ties in id order; User-Count follows the body', async (t) => {
  const app = await build(t)
  const twin = { ...ADA, name: 'Albert Einstein', email: 'twin@mc2.org' }
  const sameAge = { ...ADA, name: 'Aaron', age: 136 }
  for (const user of [ADA, twin, sameAge]) await create(app, user)

  const byAge = await app.inject({ url: '/users?sortby=age' })
  t.same(users(byAge), [ADA, twin, ALBERT, sameAge, ISAAC], 'Albert (id 2) before Aaron (id 5): same age, id order')
  t.equal(byAge.headers['user-count'], '5')
  const byName = await app.inject({ url: '/users?sortby=name' })
  t.same(users(byName), [sameAge, ADA, ALBERT, twin, ISAAC], 'the two Alberts in id order')
  t.equal(byName.headers['user-count'], '5')
  t.same(users(await app.inject({ url: '/users' })), [ISAAC, ALBERT, ADA, twin, sameAge], 'no sortby: id order')
  t.same(users(await app.inject({ url: '/users?sortby=age&sortby=bogus' })), users(byAge), 'first occurrence wins')
})

t.test('sortby by code units: upper case before lower case, no locale', async (t) => {
  const app = await build(t)
  const lower = { ...ADA, name: 'albert' }
  const accented = { ...ADA, name: 'Élie' }
  await create(app, lower)
  await create(app, accented)
  t.same(users(await app.inject({ url: '/users?sortby=name' })).map((user) => user.name),
    ['Albert Einstein', 'Isaac Newton', 'albert', 'Élie'])
})

t.test('any other sortby value: 400 naming sortby and its allowed values', async (t) => {
  const app = await build(t)
  for (const query of ['sortby=foo', 'sortby=', 'sortby', 'sortby=AGE', 'sortby=age%20', 'sortby=bogus&sortby=age']) {
    const message = assertError(t, await app.inject({ url: `/users?${query}` }), 400)
    t.equal(message, 'querystring/sortby must be one of: age, name', query)
  }
})

t.test('User-Agent is read and changes nothing', async (t) => {
  const app = await build(t)
  for (const agent of ['curl/8.0', '', 'x'.repeat(2000)]) {
    const res = await app.inject({ url: '/users', headers: { 'user-agent': agent } })
    t.equal(res.body, SAMPLE_JSON, `User-Agent: ${agent.slice(0, 20)}`)
  }
})

t.test('the content type is chosen by Accept', async (t) => {
  const app = await build(t)
  const cases: Array<[string, string, string]> = [
    ['application/json', 'application/json; charset=utf-8', SAMPLE_JSON],
    ['*/*', 'application/json; charset=utf-8', SAMPLE_JSON],
    ['text/plain', 'text/plain; charset=utf-8',
      'Isaac Newton, 372, isaac@newton.co.uk, 1683-03-01\nAlbert Einstein, 136, ae@mc2.org, 1905-12-01\n'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded',
      'name=Isaac+Newton&age=372&email=isaac%40newton.co.uk&registration_date=1683-03-01&' +
      'name=Albert+Einstein&age=136&email=ae%40mc2.org&registration_date=1905-12-01'],
    ['application/octet-stream', 'application/octet-stream', SAMPLE_JSON],
    ['text/html;q=0.9, application/octet-stream;q=0.5', 'application/octet-stream', SAMPLE_JSON],
    ['text/plain;q=0.1, application/json', 'application/json; charset=utf-8', SAMPLE_JSON]
  ]
  for (const [accept, type, body] of cases) {
    const res = await app.inject({ url: '/users', headers: { accept } })
    t.equal(res.statusCode, 200, accept)
    t.equal(res.headers['content-type'], type, accept)
    t.equal(res.body, body, accept)
    t.equal(res.headers['user-count'], '2', `${accept}: User-Count`)
  }
  const sorted = await app.inject({ url: '/users?sortby=age', headers: { accept: 'text/plain' } })
  t.equal(sorted.body, 'Albert Einstein, 136, ae@mc2.org, 1905-12-01\nIsaac Newton, 372, isaac@newton.co.uk, 1683-03-01\n', 'sorted text')
  const form = await app.inject({ url: '/users', headers: { accept: 'application/x-www-form-urlencoded' } })
  t.same([...new URLSearchParams(form.body)], SAMPLE_USERS.flatMap((user) => Object.entries(user).map(([key, value]) => [key, String(value)])), 'form pairs decode back')
})

t.test('text/html and other unsupported types: 406; 400 still comes after 406', async (t) => {
  const app = await build(t)
  for (const accept of ['text/html', 'image/png', 'application/json;q=0']) {
    assertError(t, await app.inject({ url: '/users', headers: { accept } }), 406, accept.split(';')[0])
  }
  assertError(t, await app.inject({ url: '/users?sortby=foo', headers: { accept: 'text/html' } }), 406)
  assertError(t, await app.inject({ url: '/users?sortby=foo', headers: { accept: 'text/plain' } }), 400, 'sortby')
})

t.test('HEAD /users: headers of the GET, no body', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'HEAD', url: '/users', headers: { accept: 'text/plain' } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.headers['user-count'], '2')
})

t.test('the user collection: POST, GET, PUT, DELETE on the same store as GET /users', async (t) => {
  const app = await build(t)
  const created = await post(app, ADA)
  t.equal(created.statusCode, 204)
  t.equal(created.body, '')
  t.equal(created.headers.location, '/users/3', 'ids go on after the sample users')
  t.same(json(await app.inject({ url: '/users/3' })), ADA)
  t.same(users(await app.inject({ url: '/users' })), [ISAAC, ALBERT, ADA])

  const older = { ...ADA, age: 37 }
  const replaced = await app.inject({ method: 'PUT', url: '/users/3', payload: older })
  t.equal(replaced.statusCode, 204)
  t.same(json(await app.inject({ url: '/users/3' })), older)

  t.equal((await app.inject({ method: 'DELETE', url: '/users/1' })).statusCode, 204, 'a sample user can go too')
  t.same(users(await app.inject({ url: '/users' })), [ALBERT, older])
  t.equal((await app.inject({ url: '/users' })).headers['user-count'], '2')
  assertError(t, await app.inject({ url: '/users/1' }), 404, 'userid 1')
  t.equal((await post(app, ISAAC)).headers.location, '/users/4', 'id 1 is not given again')
})

t.test('JSON User in, JSON User out: Prefer: return=representation', async (t) => {
  const app = await build(t)
  const created = await post(app, ADA, { prefer: 'return=representation' })
  t.equal(created.statusCode, 201)
  t.equal(created.body, '{"name":"Ada Lovelace","age":36,"email":"ada@engine.org","registration_date":"1843-07-01"}')
  t.equal(created.headers.location, '/users/3')
  t.equal(created.headers['preference-applied'], 'return=representation')

  const replaced = await app.inject({ method: 'PUT', url: '/users/3', payload: ISAAC, headers: { prefer: 'return=representation' } })
  t.equal(replaced.statusCode, 200)
  t.same(json(replaced), ISAAC)
  t.equal(replaced.headers['preference-applied'], 'return=representation')
})

t.test('an invalid User: 400 naming the field; a PUT leaves the user unchanged', async (t) => {
  const app = await build(t)
  const { email: _email, ...noEmail } = ADA
  const invalid: Array<[unknown, string]> = [
    [noEmail, 'email'],
    [{ ...ADA, name: 42 }, 'body/name must be string'],
    [{ ...ADA, age: '36' }, 'body/age must be integer'],
    [{ ...ADA, age: 36.5 }, 'body/age'],
    [{ ...ADA, registration_date: '1843-13-01' }, 'body/registration_date must match format "date"'],
    [{ ...ADA, registration_date: 'yesterday' }, 'registration_date'],
    ['Ada', 'body must be object']
  ]
  for (const [payload, mentions] of invalid) {
    assertError(t, await post(app, payload), 400, mentions)
    assertError(t, await app.inject({ method: 'PUT', url: '/users/1', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } }), 400, mentions)
  }
  assertError(t, await app.inject({ method: 'POST', url: '/users', payload: '{"name":', headers: { 'content-type': 'application/json' } }), 400)
  assertError(t, await app.inject({ method: 'POST', url: '/users', payload: 'name=Ada', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415)
  t.equal((await app.inject({ url: '/users' })).body, SAMPLE_JSON, 'nothing written')
})

t.test('/users/{userid}: 400 for a capture that is not an integer', async (t) => {
  const app = await build(t)
  for (const id of ['abc', '1.5', '1e0', 'Isaac']) {
    assertError(t, await app.inject({ url: `/users/${id}` }), 400, 'params/userid')
    assertError(t, await app.inject({ method: 'PUT', url: `/users/${id}`, payload: ADA }), 400, 'params/userid')
    assertError(t, await app.inject({ method: 'DELETE', url: `/users/${id}` }), 400, 'params/userid')
  }
})

t.test('sortUsers', async (t) => {
  const a = { ...ADA, name: 'b', age: 2 }
  const b = { ...ADA, name: 'a', age: 2 }
  const c = { ...ADA, name: 'a', age: 1 }
  const list = [a, b, c]
  t.same(sortUsers(list, 'age'), [c, a, b])
  t.same(sortUsers(list, 'name'), [b, c, a])
  t.same(sortUsers(list, undefined), list)
  t.not(sortUsers(list, undefined), list, 'a new array')
  t.same(list, [a, b, c], 'the input is left alone')
  t.same(sortUsers([], 'name'), [])
})

t.test('renderUsersText and renderUsersForm', async (t) => {
  t.equal(renderUsersText([]), '')
  t.equal(renderUsersForm([]), '')
  t.equal(renderUsersText([ISAAC]), 'Isaac Newton, 372, isaac@newton.co.uk, 1683-03-01\n')
  t.equal(renderUsersForm([ISAAC]), 'name=Isaac+Newton&age=372&email=isaac%40newton.co.uk&registration_date=1683-03-01')
  const odd = { name: 'Zoë & Co=1+1', age: -5, email: 'a b@c?d', registration_date: '2000-01-01' }
  t.equal(renderUsersForm([odd]), 'name=Zo%C3%AB+%26+Co%3D1%2B1&age=-5&email=a+b%40c%3Fd&registration_date=2000-01-01')
  t.same([...new URLSearchParams(renderUsersForm([odd, ADA]))].filter(([key]) => key === 'name').map(([, value]) => value), [odd.name, ADA.name])
  t.equal(renderUsersText([odd]), 'Zoë & Co=1+1, -5, a b@c?d, 2000-01-01\n')
})
