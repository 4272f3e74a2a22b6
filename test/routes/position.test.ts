import t from 'tap'
import { assertError, build } from '../helpers/index.js'

t.test('GET /position/:x/:y echoes the two integers', async (t) => {
  const app = await build(t)
  const cases: Array<[string, string]> = [
    ['/position/1/2', '{"xCoord":1,"yCoord":2}'],
    ['/position/-3/+4', '{"xCoord":-3,"yCoord":4}'],
    ['/position/007/-0010', '{"xCoord":7,"yCoord":-10}'],
    ['/position/9007199254740991/-9007199254740991', '{"xCoord":9007199254740991,"yCoord":-9007199254740991}'],
    ['/position/1/2/', '{"xCoord":1,"yCoord":2}'],
    ['/position/%2B5/%2D6', '{"xCoord":5,"yCoord":-6}']
  ]
  for (const [url, body] of cases) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', url)
    t.equal(res.body, body, url)
  }
})

t.test('a capture that is not a decimal safe integer: 400 naming it', async (t) => {
  const app = await build(t)
  const bad = ['x', '1.5', '1e3', '0x10', '%201', '1%20', '+', '-', '--1', '9007199254740992', '-9007199254740992', '１', 'NaN', 'Infinity']
  for (const value of bad) {
    assertError(t, await app.inject({ url: `/position/${value}/2` }), 400, 'params/x')
    assertError(t, await app.inject({ url: `/position/2/${value}` }), 400, 'params/y')
  }
  assertError(t, await app.inject({ url: '/position//2' }), 400, 'params/x')
})

t.test('one or three segments: no route (404, or the description page when the catch-all is on)', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const url of ['/position/1', '/position/1/2/3', '/position']) {
    assertError(t, await app.inject({ url }), 404)
  }
})

t.test('406 for an Accept without JSON; HEAD answers', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ url: '/position/1/2', headers: { accept: 'text/html' } }), 406)
  const head = await app.inject({ method: 'HEAD', url: '/position/1/2' })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(head.body, '')
})
