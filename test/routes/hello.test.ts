import t from 'tap'
import { assertError, build } from '../helpers/index.js'

t.test('GET /hello greets the name, or an anonymous coward', async (t) => {
  const app = await build(t)
  const cases: Array<[string, string]> = [
    ['/hello', '{"msg":"Hello, anonymous coward"}'],
    ['/hello?name=Alp', '{"msg":"Hello, Alp"}'],
    ['/hello?name=', '{"msg":"Hello, "}'],
    ['/hello?name', '{"msg":"Hello, "}'],
    ['/hello?name=Alp+Mestanogullari', '{"msg":"Hello, Alp Mestanogullari"}'],
    ['/hello?name=Alp%20M%2B%26%3D%3F', '{"msg":"Hello, Alp M+&=?"}'],
    ['/hello?name=%C3%A9%E2%9C%93', '{"msg":"Hello, é✓"}'],
    ['/hello?name=%22quoted%22%5C', '{"msg":"Hello, \\"quoted\\"\\\\"}'],
    ['/hello?name=first&name=second', '{"msg":"Hello, first"}'],
    ['/hello?other=1', '{"msg":"Hello, anonymous coward"}'],
    ['/hello/?name=x', '{"msg":"Hello, x"}']
  ]
  for (const [url, body] of cases) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', url)
    t.equal(res.body, body, url)
  }
})

t.test('a malformed percent-escape is kept as text, not a 500', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/hello?name=100%' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"msg":"Hello, 100%"}')
})

t.test('406 for an Accept without JSON; HEAD answers', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ url: '/hello', headers: { accept: 'text/plain' } }), 406, 'text/plain')
  const head = await app.inject({ method: 'HEAD', url: '/hello?name=x' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
})

t.test('a wrong method: 405 with Allow (catch-all off)', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ method: 'DELETE', url: '/hello' })
  assertError(t, res, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
})
