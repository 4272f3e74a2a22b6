import t from 'tap'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ALBERT, ISAAC, SAMPLE_USERS, UsersWithCountSchema, type User } from '../../schemas/user.js'
import { renderUsersForm, renderUsersText, userForm, userLine } from '../../routes/users/listing.js'
import { assertError, build, json, uncheckedInject } from '../helpers/index.js'

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

t.test('COLLECTION_MAX_ITEMS counts the sample users: 409 API_ERR_COLLECTION_FULL past it, GET /users and User-Count unchanged', async (t) => {
  const app = await build(t, { COLLECTION_MAX_ITEMS: '3' })
  t.equal((await post(app, ADA)).statusCode, 204, 'room for one after Isaac and Albert')
  const full = await post(app, ADA)
  assertError(t, full, 409, 'The collection is full: it holds 3 items')
  t.equal(json(full).code, 'API_ERR_COLLECTION_FULL')
  const list = await app.inject({ url: '/users' })
  t.equal(users(list).length, 3)
  t.equal(list.headers['user-count'], '3')
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

t.test('renderUsersText and renderUsersForm', async (t) => {
  t.equal(renderUsersText([]), '')
  t.equal(renderUsersForm([]), '')
  t.equal(renderUsersText([ISAAC]), 'Isaac Newton, 372, isaac@newton.co.uk, 1683-03-01\n')
  t.equal(renderUsersForm([ISAAC]), 'name=Isaac+Newton&age=372&email=isaac%40newton.co.uk&registration_date=1683-03-01')
  const odd = { name: 'Zoë & Co=1+1', age: -5, email: 'a b@c?d', registration_date: '2000-01-01' }
  t.equal(renderUsersForm([odd]), 'name=Zo%C3%AB+%26+Co%3D1%2B1&age=-5&email=a+b%40c%3Fd&registration_date=2000-01-01')
  t.same([...new URLSearchParams(renderUsersForm([odd, ADA]))].filter(([key]) => key === 'name').map(([, value]) => value), [odd.name, ADA.name])
  t.equal(renderUsersText([odd]), 'Zoë & Co=1+1, -5, a b@c?d, 2000-01-01\n')
  t.equal(renderUsersText([odd, ADA]), userLine(odd) + userLine(ADA), 'a list is its lines')
  t.equal(renderUsersForm([odd, ADA]), `${userForm(odd)}&${userForm(ADA)}`, 'a list is its users\' forms joined by &')
})

/** The whole-body answers of GET /users before lists were streamed: the route's schema serializer on the whole array, and the two renderers. */
const wholeJson = SerializerSelector()({}, {})({ schema: UsersWithCountSchema, method: 'GET', url: '/users', httpStatus: '200' }) as (users: User[]) => string
const wholeText = (list: User[]) => list.map((user) => `${user.name}, ${user.age}, ${user.email}, ${user.registration_date}\n`).join('')
function wholeForm (list: User[]): string {
  const form = new URLSearchParams()
  for (const user of list) {
    form.append('name', user.name)
    form.append('age', String(user.age))
    form.append('email', user.email)
    form.append('registration_date', user.registration_date)
  }
  return form.toString()
}
const byUnits = (a: string | number, b: string | number) => a < b ? -1 : a > b ? 1 : 0

/** Many users, enough for a list longer than a whole body (lib/list-body.ts), names that JSON escapes or that sort oddly among them. */
async function many (app: FastifyInstance, count: number): Promise<User[]> {
  const names = ['Zoë', 'ada', 'Ada', '🍎 pie', 'quote " and \\', 'tab\tline\n', '\ue000', 'É', 'b', '\u0000nul']
  const created: User[] = []
  for (let n = 0; n < count; n++) {
    const user = { name: `${names[n % names.length]} ${n % 13}`, age: (n * 7) % 90, email: `user${n}@example.org`, registration_date: '2026-11-22' }
    // Half of them sent with their keys in another order: the list writes them in the schema's.
    const { name, age, email, registration_date: date } = user
    await create(app, n % 2 === 0 ? user : { registration_date: date, email, age, name })
    created.push(user)
  }
  return created
}

t.test('a long list is streamed, in the same bytes as the whole body was, in every media type and order', async (t) => {
  const app = await build(t)
  const all: User[] = [...SAMPLE_USERS, ...await many(app, 1500)]
  const orders: Array<[string, User[]]> = [
    ['', all],
    ['?sortby=age', all.toSorted((a, b) => byUnits(a.age, b.age))],
    ['?sortby=name', all.toSorted((a, b) => byUnits(a.name, b.name))]
  ]
  for (const [query, list] of orders) {
    const cases: Array<[string, string]> = [
      ['application/json', wholeJson(list)],
      ['application/octet-stream', wholeJson(list)],
      ['text/plain', wholeText(list)],
      ['application/x-www-form-urlencoded', wholeForm(list)]
    ]
    for (const [accept, body] of cases) {
      const res = await app.inject({ url: `/users${query}`, headers: { accept } })
      t.equal(res.statusCode, 200, `${query} ${accept}`)
      t.ok(res.body === body, `${query} ${accept}: the same bytes (${body.length} characters)`)
      t.equal(res.headers['transfer-encoding'], 'chunked', `${query} ${accept}: streamed`)
      t.equal(res.headers['user-count'], String(all.length), `${query} ${accept}: User-Count`)
    }
  }
  const head = await app.inject({ method: 'HEAD', url: '/users' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['user-count'], String(all.length), 'HEAD: User-Count too')
  const sample = await build(t)
  t.equal((await sample.inject({ url: '/users' })).headers['content-length'], String(SAMPLE_JSON.length), 'a short list keeps its Content-Length')
})

t.test('User-Count is the number of users sent, whatever is written while the list is sent', async (t) => {
  const app = await build(t)
  await many(app, 1000)
  for (const [n, query] of ['', '?sortby=name', '?sortby=age'].entries()) {
    const before = await app.inject({ url: `/users${query}` })
    // Read as a stream: the conformance check of build()'s inject reads answers whole.
    const res = await uncheckedInject(app)({ url: `/users${query}`, payloadAsStream: true })
    // The headers are out and the body has begun; the rest is read after these writes.
    await create(app, ADA)
    t.equal((await app.inject({ method: 'DELETE', url: `/users/${n + 1}` })).statusCode, 204)
    t.equal((await app.inject({ method: 'PUT', url: `/users/${n + 10}`, payload: { ...ADA, name: 'Zed' } })).statusCode, 204)
    let body = ''
    for await (const chunk of res.stream()) body += chunk
    t.equal(res.headers['user-count'], String(json<User[]>(before).length), `${query}: User-Count is the number of users in the body`)
    t.equal(res.headers['user-count'], before.headers['user-count'])
    t.ok(body === before.body, `${query}: the list as it was when asked for`)
    t.not((await app.inject({ url: `/users${query}` })).body, before.body, 'the writes are in the next list')
  }
})

t.test('Range on GET /users: pages by id, with the headers of /colors', async (t) => {
  const app = await build(t)
  const ids = [1, 2, await create(app, ADA), await create(app, { ...ADA, name: 'Ada 2' }), await create(app, { ...ADA, name: 'Ada 3' })]
  t.equal((await app.inject({ method: 'DELETE', url: `/users/${ids[3]}` })).statusCode, 204)
  const byId: Record<number, User> = { 1: ISAAC, 2: ALBERT, 3: ADA, 5: { ...ADA, name: 'Ada 3' } }
  const page = async (range: string, expected: { ids: number[], contentRange?: string, nextRange?: string }, headers: Record<string, string> = {}) => {
    const res = await app.inject({ url: '/users', headers: { range, ...headers } })
    t.equal(res.statusCode, 206, `${range}: 206`)
    t.equal(res.headers['accept-ranges'], 'id', `${range}: Accept-Ranges`)
    t.equal(res.headers['total-count'], '4', `${range}: Total-Count, the whole collection`)
    t.equal(res.headers['content-range'], expected.contentRange, `${range}: Content-Range`)
    t.equal(res.headers['next-range'], expected.nextRange, `${range}: Next-Range`)
    t.notOk(res.headers['user-count'], `${range}: User-Count is the whole list's`)
    return res
  }
  t.same(users(await page('id', { ids: [1, 2, 3, 5], contentRange: 'id 1..5' })), [ISAAC, ALBERT, ADA, byId[5]], 'limit 100, ascending')
  t.same(users(await page('id; limit 2', { ids: [1, 2], contentRange: 'id 1..2', nextRange: 'id 2;limit 2;offset 1;order asc' })), [ISAAC, ALBERT])
  t.same(users(await page('id 2;limit 2;offset 1;order asc', { ids: [3, 5], contentRange: 'id 3..5', nextRange: 'id 5;limit 2;offset 1;order asc' })), [ADA, byId[5]])
  t.same(users(await page('id 5;limit 2;offset 1;order asc', { ids: [] })), [], 'the end: an empty page')
  t.same(users(await page('id 4; order desc; limit 2', { ids: [3, 2], contentRange: 'id 3..2', nextRange: 'id 2;limit 2;offset 1;order desc' })), [ADA, ALBERT], 'a value no user has')
  t.same(users(await page('id; order desc; limit 1', { ids: [5], contentRange: 'id 5..5', nextRange: 'id 5;limit 1;offset 1;order desc' })), [byId[5]])
  t.same(users(await page('id 3; limit 1', { ids: [3], contentRange: 'id 3..3', nextRange: 'id 3;limit 1;offset 1;order asc' })), [ADA], 'the value asked for, alone')
  t.same(users(await page('id; limit 0', { ids: [] })), [], 'limit 0')
  t.same(users(await page('id -9007199254740991; offset 9007199254740991', { ids: [] })), [], 'the extremes')

  const text = await page('id 2; limit 2', { ids: [2, 3], contentRange: 'id 2..3', nextRange: 'id 3;limit 2;offset 1;order asc' }, { accept: 'text/plain' })
  t.equal(text.body, wholeText([ALBERT, ADA]), 'a page in text/plain')
  t.equal(text.headers['content-type'], 'text/plain; charset=utf-8')
  const form = await page('id 2; limit 2', { ids: [2, 3], contentRange: 'id 2..3', nextRange: 'id 3;limit 2;offset 1;order asc' }, { accept: 'application/x-www-form-urlencoded' })
  t.equal(form.body, wholeForm([ALBERT, ADA]), 'and as a form')
  const octets = await page('id 2; limit 2', { ids: [2, 3], contentRange: 'id 2..3', nextRange: 'id 3;limit 2;offset 1;order asc' }, { accept: 'application/octet-stream' })
  t.equal(octets.body, wholeJson([ALBERT, ADA]), 'and as octets')

  const head = await app.inject({ method: 'HEAD', url: '/users', headers: { range: 'id; limit 1' } })
  t.equal(head.statusCode, 206)
  t.equal(head.body, '')
  t.equal(head.headers['next-range'], 'id 1;limit 1;offset 1;order asc')
  t.equal((await app.inject({ url: '/users/', headers: { range: 'id; limit 1' } })).headers['content-range'], 'id 1..1', 'a trailing slash')
})

t.test('following Next-Range visits every user once, in id order, both ways, on a list longer than a page', async (t) => {
  const app = await build(t)
  const all: User[] = [...SAMPLE_USERS, ...await many(app, 250)]
  for (const order of ['asc', 'desc'] as const) {
    for (const limit of [1, 7, 64, 65, 66, 100, 1000]) {
      const seen: User[] = []
      let range: string | undefined = `id; limit ${limit}; order ${order}`
      let pages = 0
      while (range !== undefined && pages++ < 300) {
        const res = await app.inject({ url: '/users', headers: { range } })
        seen.push(...users(res))
        range = res.headers['next-range'] as string | undefined
      }
      t.same(seen, order === 'asc' ? all : all.toReversed(), `limit ${limit}, ${order}: every user once`)
    }
  }
})

t.test('a malformed Range, or one with sortby: 400 naming the problem, with Accept-Ranges', async (t) => {
  const app = await build(t)
  const malformed: Array<[string, RegExp]> = [
    ['', /^Invalid Range: the header is empty/],
    ['name', /^Invalid Range: unknown field "name"; the fields are id/],
    ['bytes=0-100', /^Invalid Range: unknown field "bytes=0-100"/],
    ['id 1 2', /^Invalid Range: "id 1 2" has more than a field and a value/],
    ['id; limit -1', /^Limit must be non-negative/],
    ['id; offset x', /^Invalid Range Options: offset must be a decimal integer/],
    ['id; order DESC', /^Invalid Range Order/],
    ['id 1.5', /^Invalid Range Value: the id value must be a decimal integer/],
    ['id 9007199254740992', /^Invalid Range Value/]
  ]
  for (const [range, message] of malformed) {
    for (const accept of ['application/json', 'text/plain']) {
      const res = await app.inject({ url: '/users', headers: { range, accept } })
      assertError(t, res, 400, message)
      t.equal(res.headers['accept-ranges'], 'id', `${JSON.stringify(range)}: Accept-Ranges tells the field`)
    }
  }
  for (const sortby of ['age', 'name']) {
    const res = await app.inject({ url: `/users?sortby=${sortby}`, headers: { range: 'id; limit 1' } })
    assertError(t, res, 400, `Invalid Range: a Range pages in id order; it cannot be combined with sortby=${sortby}`)
  }
  assertError(t, await app.inject({ url: '/users?sortby=bogus', headers: { range: 'nonsense' } }), 400, 'querystring/sortby')
  t.notOk((await app.inject({ url: '/users' })).headers['accept-ranges'], 'no Range, no Accept-Ranges: the answer is as it was')
})
