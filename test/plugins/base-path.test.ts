import t from 'tap'
import { build } from '../helpers/index.js'

const ADA = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
const json = { 'content-type': 'application/json' }

t.test('BASE_PATH is carried into Location', async (t) => {
  const app = await build(t, { BASE_PATH: '/api/v1' })
  const created = await app.inject({ method: 'POST', url: '/users', headers: json, payload: ADA })
  t.equal(created.statusCode, 204)
  t.equal(created.headers.location, '/api/v1/users/3')
  const represented = await app.inject({ method: 'POST', url: '/users', headers: { ...json, prefer: 'return=representation' }, payload: ADA })
  t.equal(represented.statusCode, 201)
  t.equal(represented.headers.location, '/api/v1/users/4')
  const product = await app.inject({ method: 'POST', url: '/products', headers: json, payload: { productId: 7 } })
  t.equal(product.headers.location, '/api/v1/products/1')
  t.equal((await app.inject({ url: '/users/3' })).statusCode, 200, 'the routes stay where they are: the proxy strips the prefix')
})

t.test('without BASE_PATH, Location is the plain path', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ method: 'POST', url: '/users', headers: json, payload: ADA })).headers.location, '/users/3')
})

t.test('Swagger UI loads its assets under BASE_PATH', async (t) => {
  const prefixed = await build(t, { BASE_PATH: '/api' })
  const page = (await prefixed.inject({ url: '/documentation' })).body
  for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-initializer.js']) {
    t.match(page, `"/api/documentation/static/${asset}"`, asset)
  }
  t.notMatch(page, /"\/documentation\//, 'no link without the prefix')
  t.match((await prefixed.inject({ url: '/documentation/' })).body, '"./static/swagger-ui-bundle.js"', 'with a trailing slash the links are relative')
  t.match((await prefixed.inject({ url: '/documentation/static/swagger-initializer.js' })).body, "resolveUrl('./json')", 'the document is fetched relative to the page')
  t.equal((await prefixed.inject({ url: '/documentation/json' })).headers.location, '/api/openapi.json', 'and sent on to /openapi.json under the prefix')

  const plain = await build(t)
  t.match((await plain.inject({ url: '/documentation' })).body, '"/documentation/static/swagger-ui-bundle.js"')
})

t.test('the description page says the prefix', async (t) => {
  const prefixed = (await (await build(t, { BASE_PATH: '/api' })).inject({ url: '/docs' })).body
  t.match(prefixed, 'reached under the path prefix `/api`')
  t.match(prefixed, '`GET /api/hello`')
  t.match(prefixed, /OpenAPI 3 document at `\/api\/openapi\.json`,\swhich\s`\/api\/documentation`/)
  t.match(prefixed, '\n## GET /hello\n', 'the endpoints keep their own paths')

  const plain = (await (await build(t)).inject({ url: '/docs' })).body
  t.notMatch(plain, 'path prefix')
  t.match(plain, /OpenAPI 3 document at `\/openapi\.json`,\swhich\s`\/documentation`/)
})
