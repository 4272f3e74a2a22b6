import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { Test } from 'tap'
import { projectRoot } from '../../plugins/config.js'
import { build, json, walkRoutes } from '../helper.js'

const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8'))

/** The whole app, its endpoints walked independently of @fastify/swagger, and its document. */
async function walk (t: Test, env: Record<string, string> = {}) {
  const { server, endpoints } = await walkRoutes(t, env)
  const res = await server.inject({ url: '/openapi.json' })
  return {
    server,
    endpoints: endpoints.map(({ method, url, route }) => ({ method: method.toLowerCase(), path: openapiPath(url), route })),
    res,
    document: json(res)
  }
}

/** `/position/:x/:y` → `/position/{x}/{y}`; a wildcard is `{*}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}')

t.test('GET /openapi.json: a valid OpenAPI 3 document, named and versioned by package.json', async (t) => {
  const { res, document } = await walk(t)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.match(document.openapi, /^3\.\d+\.\d+$/)
  t.equal(document.info.title, pkg.name)
  t.equal(document.info.version, pkg.version)
  // The parser dereferences in place: it gets a copy.
  await t.resolves(SwaggerParser.validate(structuredClone(document)), 'validates')
})

t.test('every walked route is in the paths with its method; nothing hidden, no HEAD', async (t) => {
  const { endpoints, document } = await walk(t)
  t.ok(endpoints.length >= 30, `the walk found the routes (${endpoints.length})`)
  for (const { method, path } of endpoints) {
    t.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path}`)
  }
  const operations = Object.entries<Record<string, unknown>>(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
  t.same(operations.sort(), endpoints.map(({ method, path }) => `${method} ${path}`).sort(), 'and nothing else')
  t.notOk(Object.keys(document.paths).some((path) => path.startsWith('/documentation')), 'Swagger UI\'s routes are hidden')
})

t.test('captures are {name} path parameters of their declared type', async (t) => {
  const { document } = await walk(t)
  const position = document.paths['/position/{x}/{y}']?.get
  const params = Object.fromEntries(position.parameters.map((p: { name: string }) => [p.name, p]))
  for (const name of ['x', 'y']) {
    t.match(params[name], { in: 'path', required: true, schema: { type: 'integer' } }, `{${name}}`)
  }
  t.match(document.paths['/hello'].get.parameters, [{ in: 'query', name: 'name', required: false, schema: { type: 'string' } }])
})

t.test('content types, examples and response headers come from the schemas', async (t) => {
  const { endpoints, document } = await walk(t)
  const marketing = document.paths['/marketing'].post
  t.same(Object.keys(marketing.requestBody.content), ['application/json', 'application/x-www-form-urlencoded'], 'consumes')
  t.match(marketing.requestBody.content['application/json'], { example: { clientName: String } }, 'the body example')
  const persons = document.paths['/persons'].get.responses
  t.same(Object.keys(persons['200'].content), ['application/json', 'text/html'], 'produces')
  t.same(Object.keys(persons['406'].content), ['application/json'], 'an error is JSON whatever the endpoint produces')
  t.same(persons['406'].content['application/json'].example, { statusCode: 406, error: 'Not Acceptable', message: '<what was wrong>' },
    'with an example of its own status')
  t.equal(persons['406'].description, 'Not Acceptable', 'described by its reason phrase')
  t.match(document.paths['/users'].get.responses['200'].headers, { 'User-Count': { schema: { type: 'integer' } } }, 'response headers')
  t.ok(document.paths['/users'].get.responses['200'].content['application/json'].example, 'success example')

  const files = endpoints.filter(({ route }) => route.schema?.produces === undefined &&
    (route.schema?.response as Record<string, { format?: string }> | undefined)?.[200]?.format === 'binary')
  t.ok(files.length > 0, 'the walk found a route answering a file (the static area)')
  for (const { method, path } of files) {
    t.same(Object.keys(document.paths[path][method].responses['200'].content), ['*/*'], `${path}: a file may be of any type`)
  }
})

t.test('routes with config.auth have their security scheme; bearer only when API_TOKENS is set', async (t) => {
  for (const tokens of [false, true]) {
    const { endpoints, document } = await walk(t, tokens ? { API_TOKENS: 'secret-token' } : {})
    t.match(document.components.securitySchemes, {
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' }
    })
    const protectedRoutes = endpoints.filter(({ route }) => route.config?.auth !== undefined)
    t.ok(protectedRoutes.some(({ route }) => route.config?.auth === 'basic'), 'the walk found Basic-protected routes')
    t.ok(protectedRoutes.some(({ route }) => route.config?.auth === 'bearer'), 'and bearer-protected ones')
    for (const { method, path, route } of endpoints) {
      const { security } = document.paths[path][method]
      const expected = route.config?.auth === 'basic'
        ? [{ basicAuth: [] }]
        : route.config?.auth === 'bearer' && tokens ? [{ bearerAuth: [] }] : undefined
      t.same(security, expected, `${method.toUpperCase()} ${path}, API_TOKENS ${tokens ? 'set' : 'unset'}`)
    }
  }
})

t.test('/documentation: Swagger UI over the same document, every asset served locally', async (t) => {
  const server = await build(t)
  const document = (await server.inject({ url: '/openapi.json' })).body
  const page = await server.inject({ url: '/documentation' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.notMatch(page.body, /(src|href)="(https?:)?\/\//, 'no asset from another host')
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string)
  t.ok(assets.length >= 4, `assets: ${assets.join(', ')}`)
  for (const asset of assets) {
    t.equal((await server.inject({ url: asset })).statusCode, 200, asset)
  }
  const initializer = await server.inject({ url: '/documentation/static/swagger-initializer.js' })
  t.match(initializer.body, /validatorUrl: null/, 'no online validator')
  const served = await server.inject({ url: '/documentation/json' })
  t.same(json(served), JSON.parse(document), 'the document it shows is /openapi.json')
})
