import t from 'tap'
import { assertError, build } from '../helpers/index.js'

t.test('GET /failing: 503 text/plain "Sorry dear user."', async (t) => {
  const app = await build(t)
  for (const accept of [undefined, '*/*', 'application/json']) {
    const res = await app.inject({ url: '/failing', headers: accept === undefined ? {} : { accept } })
    t.equal(res.statusCode, 503, `Accept: ${accept}`)
    t.equal(res.headers['content-type'], 'text/plain; charset=utf-8', `Accept: ${accept}`)
    t.equal(res.body, 'Sorry dear user.', `Accept: ${accept}`)
  }
  const head = await app.inject({ method: 'HEAD', url: '/failing' })
  t.equal(head.statusCode, 503, 'HEAD')
  t.equal(head.body, '', 'HEAD: no body')
})

t.test('a JSON route, as in servant: an Accept without JSON is a 406 before the handler', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ url: '/failing', headers: { accept: 'text/html' } }), 406, 'application/json')
})
