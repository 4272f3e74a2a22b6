import t from 'tap'
import { assertError, build } from '../helpers/index.js'

t.test('GET /a: the JSON integer 1797', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/a' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '1797')
  assertError(t, await app.inject({ url: '/a', headers: { accept: 'text/html' } }), 406)
})
