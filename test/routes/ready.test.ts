import t from 'tap'
import { assertError, build, json } from '../helpers/index.js'

t.test('GET /ready on the memory store: ready as soon as the app is', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/ready' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.same(json(res), { status: 'ready' })
  assertError(t, await app.inject({ url: '/ready', headers: { accept: 'text/html' } }), 406, 'application/json')
})
