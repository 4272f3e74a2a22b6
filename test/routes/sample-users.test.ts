import t from 'tap'
import type { RouteOptions } from 'fastify'
import sampleUsers from '../../routes/sample-users.js'
import { assertError, build, buildPlugins } from '../helpers/index.js'

const ISAAC_JSON = '{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"}'
const ALBERT_JSON = '{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}'

t.test('GET /isaac: Isaac Newton, without the example headers', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/isaac' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, ISAAC_JSON, 'exact body, fields in the spec\'s order')
  t.notOk('x-an-int' in res.headers, 'no X-An-Int')
  t.notOk('x-a-bool' in res.headers, 'no X-A-Bool')
})

t.test('GET /albert: Albert Einstein with X-An-Int: 1797 and X-A-Bool: true', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/albert' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, ALBERT_JSON, 'exact body')
  t.equal(res.headers['x-an-int'], '1797')
  t.equal(res.headers['x-a-bool'], 'true')

  const head = await app.inject({ method: 'HEAD', url: '/albert' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '', 'HEAD: no body')
  t.equal(head.headers['x-an-int'], '1797', 'HEAD: same headers')
})

t.test('both declare X-An-Int (integer) and X-A-Bool (boolean) on their response; /albert always sends them', async (t) => {
  const routes: RouteOptions[] = []
  await buildPlugins(t, (server) => {
    server.addHook('onRoute', (route) => { if (route.method === 'GET') routes.push(route) })
    server.register(sampleUsers)
  })
  t.same(routes.map((route) => route.url).sort(), ['/albert', '/isaac'])
  for (const route of routes) {
    const ok = (route.schema?.response as Record<number, { headers?: { properties: Record<string, { type: string }>, required?: string[] } }>)[200]
    t.equal(ok?.headers?.properties['X-An-Int']?.type, 'integer', `${route.url}: X-An-Int`)
    t.equal(ok?.headers?.properties['X-A-Bool']?.type, 'boolean', `${route.url}: X-A-Bool`)
    t.same(ok?.headers?.required ?? [], route.url === '/albert' ? ['X-An-Int', 'X-A-Bool'] : [], `${route.url}: required when always sent`)
  }
})

t.test('Accept without JSON: 406', async (t) => {
  const app = await build(t)
  for (const url of ['/isaac', '/albert']) {
    assertError(t, await app.inject({ url, headers: { accept: 'text/html' } }), 406, 'application/json')
  }
})
