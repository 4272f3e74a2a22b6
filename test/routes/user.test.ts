import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ALBERT, ISAAC, type User } from '../../schemas/user.js'
import { assertError, build, json } from '../helpers/index.js'

const ADA: User = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }

async function create (app: FastifyInstance, user: User): Promise<number> {
  const res = await app.inject({ method: 'POST', url: '/users', payload: user })
  const id = /^\/users\/(\d+)$/.exec(String(res.headers.location))?.[1]
  if (res.statusCode !== 204 || id === undefined) throw new Error(`POST /users: ${res.statusCode} ${res.body}`)
  return Number(id)
}

t.test('GET /user/{userid}: the user store\'s users', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/user/1' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.same(json(res), ISAAC)
  t.same(json(await app.inject({ url: '/user/2' })), ALBERT)
})

t.test('/user/{userid} sees writes made through /users', async (t) => {
  const app = await build(t)
  const id = await create(app, ADA)
  t.same(json(await app.inject({ url: `/user/${id}` })), ADA, 'after POST /users')
  const older = { ...ADA, age: 37 }
  t.equal((await app.inject({ method: 'PUT', url: `/users/${id}`, payload: older })).statusCode, 204)
  t.same(json(await app.inject({ url: `/user/${id}` })), older, 'after PUT /users/{id}')
  t.equal((await app.inject({ method: 'DELETE', url: `/users/${id}` })).statusCode, 204)
  assertError(t, await app.inject({ url: `/user/${id}` }), 404, `userid ${id}`)
})

t.test('DELETE /user/{userid}: 204, gone from /users too', async (t) => {
  const app = await build(t)
  const id = await create(app, ADA)
  const res = await app.inject({ method: 'DELETE', url: `/user/${id}` })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  assertError(t, await app.inject({ url: `/users/${id}` }), 404)
  assertError(t, await app.inject({ url: `/user/${id}` }), 404)
  assertError(t, await app.inject({ method: 'DELETE', url: `/user/${id}` }), 404, `No user with userid ${id}`)
  t.equal((await app.inject({ method: 'DELETE', url: '/user/2' })).statusCode, 204)
  t.same(json(await app.inject({ url: '/users' })), [ISAAC], 'the list agrees')
})

t.test('/user/{userid}: 400 for a non-integer id, 404 for a missing one', async (t) => {
  const app = await build(t)
  for (const id of ['abc', '1.5', 'Isaac']) {
    assertError(t, await app.inject({ url: `/user/${id}` }), 400, /^params\/userid must be a decimal integer/)
    assertError(t, await app.inject({ method: 'DELETE', url: `/user/${id}` }), 400, 'params/userid')
  }
  assertError(t, await app.inject({ url: '/user/9007199254740991' }), 404)
  assertError(t, await app.inject({ method: 'DELETE', url: '/user/3' }), 404)
})

t.test('/user/{userid} has GET and DELETE only', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ method: 'PUT', url: '/user/1', payload: ADA })
  assertError(t, res, 405)
  t.equal(res.headers.allow, 'GET, HEAD, DELETE')
  assertError(t, await app.inject({ method: 'POST', url: '/user', payload: ADA }), 404)
  t.same(json(await app.inject({ url: '/user/1' })), ISAAC, 'unchanged')
})
