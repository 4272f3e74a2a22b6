import fs from 'node:fs'
import zlib from 'node:zlib'
import path from 'node:path'
import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { Test } from 'tap'
import { assertError, build, json, walkRoutes } from '../helpers/index.js'
import { projectRoot } from '../../lib/project-root.js'

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

/** `/position/:x/:y` → `/position/{x}/{y}`; a wildcard is the parameter `{path}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}')

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
  const { document } = await walk(t)
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
})

t.test('each media type as it is on the wire: JSON by its schema, text as strings, bytes as binary, NDJSON by its items', async (t) => {
  const { document } = await walk(t)
  const users = document.paths['/users'].get.responses['200'].content
  t.same(users['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/User' } })
  t.same(users['text/plain'].schema, { type: 'string' }, 'text/plain: a string')
  t.match(users['text/plain'].example, /^Isaac Newton, 372, isaac@newton\.co\.uk, 1683-03-01\n/, 'its example as the server writes it')
  const usersForm = users['application/x-www-form-urlencoded']
  t.match(usersForm.schema, { type: 'object', properties: { name: { type: 'array', items: { type: 'string' } }, registration_date: { type: 'array' } } },
    'a form: every field a repeated key')
  t.same(usersForm.encoding.age, { style: 'form', explode: true, allowReserved: true })
  t.match(usersForm.example, { name: ['Isaac Newton', 'Albert Einstein'], age: ['372', '136'] }, 'its example, the fields of the form the server writes')
  t.same(users['application/octet-stream'].schema, { type: 'string', format: 'binary' }, 'octet-stream: binary')
  const persons = document.paths['/persons'].get.responses['200'].content
  t.same(persons['text/html'].schema, { type: 'string' }, 'HTML: a string')
  t.match(persons['text/html'].example, /^<table><tr><th>first name<\/th>/)

  const stream = document.paths['/userStream'].get.responses['200'].content
  t.same(Object.keys(stream), ['application/x-ndjson', 'application/json'])
  for (const [type, media] of Object.entries<{ schema: unknown, 'x-itemSchema': unknown, example: string }>(stream)) {
    t.match(media.schema, type === 'application/json' ? { anyOf: [{ type: 'string' }, { $ref: '#/components/schemas/User' }] } : { type: 'string' },
      `${type}: the body is text lines (labelled JSON, one line is one User)`)
    t.same(media['x-itemSchema'], { $ref: '#/components/schemas/User' }, `${type}: each line a User`)
    t.match(media.example, /^\{"name":"Isaac Newton",[^\n]*\}\n$/, `${type}: the example is NDJSON`)
  }

  const form = document.paths['/marketing'].post.requestBody.content['application/x-www-form-urlencoded']
  t.same(form.encoding, { clientInterestedIn: { style: 'form', explode: true } }, 'a list is one repeated key per element')
  t.same(form.schema.required, ['clientName', 'clientEmail', 'clientAge'], 'a form may leave the list out (the empty list)')
  t.same(document.paths['/marketing'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/ClientInfo' })

  const b = document.paths['/b'].get.requestBody
  t.match(b, { required: false, content: { 'application/json': { schema: { type: 'number' } } } }, 'GET /b: an optional JSON number body')

  const file = document.paths['/static/{path}'].get
  t.match(file.parameters, [{ in: 'path', name: 'path', required: true, schema: { type: 'string' } }], 'the wildcard is a named parameter')
  t.same(file.parameters.filter((p: { in: string }) => p.in === 'header').map((p: { name: string }) => p.name), ['Range', 'If-None-Match', 'If-Modified-Since'])
  t.same(Object.keys(file.responses), ['200', '206', '304', '400', '404', '413', '416', '503'])
  t.same(file.responses['200'].content, { '*/*': { schema: { type: 'string', format: 'binary' }, example: 'Hello from the static area.\n' } }, 'a file may be of any type')
  t.equal(file.responses['206'].headers['Content-Range'].required, true)
  t.equal(file.responses['304'].content, undefined, '304: no body')
})

t.test('every status a route can answer: 406 with produces, 413 everywhere, 400/415 with a body, 401 where credentials are enforced, 503 when overloaded', async (t) => {
  const { endpoints, document } = await walk(t)
  for (const { method, path, route } of endpoints) {
    const statuses = Object.keys(document.paths[path][method].responses)
    const schema = route.schema ?? {}
    if (schema.produces !== undefined) t.ok(statuses.includes('406'), `${method} ${path}: 406`)
    t.ok(statuses.includes('413'), `${method} ${path}: 413, for a body over the route's limit, or any body where it takes none`)
    if (schema.body !== undefined) t.ok(['400', '415'].every((s) => statuses.includes(s)), `${method} ${path}: 400, 415`)
    if (/[:*]/.test(route.url)) t.ok(statuses.includes('400'), `${method} ${path}: 400 for a capture`)
    t.equal(statuses.includes('401'), route.config?.auth === 'basic', `${method} ${path}: 401 when credentials are enforced`)
    if ((route.config as { pressureHandler?: unknown } | undefined)?.pressureHandler === undefined) t.ok(statuses.includes('503'), `${method} ${path}: 503`)
  }
  t.same(Object.keys(document.paths['/health'].get.responses), ['200', '406', '413'], 'liveness answers under load too: no 503')
  t.same(Object.keys(document.paths['/hello'].get.responses), ['200', '406', '413', '503'], 'a string query parameter cannot be refused: no 400')
  t.match(document.paths['/hello'].get.responses['503'].headers, { 'Retry-After': { required: true } }, 'an overloaded answer says when to retry')
  const tokens = (await walk(t, { API_TOKENS: 'secret-token' })).document
  t.match(tokens.paths['/products'].post.responses['401'], {
    headers: { 'WWW-Authenticate': { required: true, schema: { const: 'Bearer realm="my-realm"' } } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
  }, 'with API_TOKENS, bearer writes answer 401 with their challenge')
})

t.test('named schemas are components, referred to by $ref: one definition each', async (t) => {
  const { document } = await walk(t)
  const names = ['ClientInfo', 'Color', 'Email', 'Error', 'FileContent', 'HelloMessage', 'Person', 'Position', 'Product', 'User']
  t.same(Object.keys(document.components.schemas), names)
  const text = JSON.stringify(document)
  t.equal(text.split('"registration_date":{"format":"date"').length - 1, 1, 'the User shape is written once')
  t.equal(text.split('"statusCode":{').length - 1, 1, 'and so is the error')
  for (const name of names) t.ok(text.includes(`"$ref":"#/components/schemas/${name}"`), `${name} is referred to`)
  t.notOk(text.includes('"$id"'), 'no $id is left')
  t.notOk(text.includes('x-example-titles'), 'nor our own annotations')
  t.same(document.paths['/albert'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/User' },
    'a response with headers of its own still refers to its schema')
  t.same(document.paths['/hello'].get.responses['200'].content['application/json'].examples, {
    'when-a-value-is-provided-for-name': { summary: 'When a value is provided for \'name\'', value: { msg: 'Hello, Alp' } },
    'when-name-is-not-specified': { summary: 'When \'name\' is not specified', value: { msg: 'Hello, anonymous coward' } }
  }, 'titled examples')
})

t.test('operation names a client author would choose, a tag per endpoint group, the server', async (t) => {
  const { document } = await walk(t)
  const operations = Object.entries<Record<string, { operationId: string, tags: string[] }>>(document.paths)
    .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method, path, ...operation })))
  const ids = operations.map((operation) => operation.operationId)
  t.equal(new Set(ids).size, ids.length, 'unique')
  const id = (method: string, path: string) => document.paths[path][method].operationId
  t.equal(id('get', '/users'), 'getUsers')
  t.equal(id('get', '/position/{x}/{y}'), 'getPosition')
  t.equal(id('post', '/marketing'), 'postMarketing')
  t.equal(id('put', '/users/{userid}'), 'putUsersById', 'an item of a listed collection')
  t.equal(id('get', '/user/{userid}'), 'getUser')
  t.equal(id('get', '/static/{path}'), 'getStatic')
  t.equal(id('get', '/users/list-all/now'), 'getUsersListAllNow')
  for (const operation of operations) t.same(operation.tags, [operation.path.split('/')[1]], `${operation.method} ${operation.path}: tagged`)
  t.same(document.tags.map((tag: { name: string }) => tag.name), [...new Set(operations.map((operation) => operation.tags[0]))].sort(), 'tags are declared')
  t.same(document.servers, [{ url: '/', description: 'This server' }])
  t.same((await walk(t, { BASE_PATH: '/api' })).document.servers, [{ url: '/api', description: 'This server' }], 'behind a prefix')

  const location = document.paths['/users'].post.responses['204'].headers
  t.match(location, { Location: { required: true, description: 'The new user\'s URL: `/users/<userid>`' } }, 'always sent: required')
  t.notOk(location['Preference-Applied'].required, 'sent only when asked for')
  t.match(document.paths['/colors'].get.responses['206'].headers, {
    'Total-Count': { required: true },
    'Accept-Ranges': { required: true },
    'Content-Range': { required: undefined },
    'Next-Range': { required: undefined }
  })
  t.notMatch(JSON.stringify(document), /: \/"|<prefix>/, 'no description lost a placeholder')
})

t.test('security: [] on public operations, basic where required, bearer only when the server requires tokens (API_TOKENS, or production)', async (t) => {
  for (const [tokens, env] of [[false, {}], [true, { API_TOKENS: 'secret-token' }], [true, { NODE_ENV: 'production', STORE: 'memory' }]] as const) {
    const { endpoints, document } = await walk(t, env)
    t.same(Object.keys(document.components.securitySchemes), tokens ? ['basicAuth', 'bearerAuth'] : ['basicAuth'])
    const protectedRoutes = endpoints.filter(({ route }) => route.config?.auth !== undefined)
    t.ok(protectedRoutes.some(({ route }) => route.config?.auth === 'basic'), 'the walk found Basic-protected routes')
    t.ok(protectedRoutes.some(({ route }) => route.config?.auth === 'bearer'), 'and bearer-protected ones')
    for (const { method, path, route } of endpoints) {
      const { security } = document.paths[path][method]
      const expected = route.config?.auth === 'basic'
        ? [{ basicAuth: [] }]
        : route.config?.auth === 'bearer' && tokens ? [{ bearerAuth: [] }] : []
      t.same(security, expected, `${method.toUpperCase()} ${path}, ${JSON.stringify(env)}`)
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
  // One route serves the document: Swagger UI's own URL for it is sent there.
  const moved = await server.inject({ url: '/documentation/json' })
  t.equal(moved.statusCode, 301, 'GET /documentation/json: moved')
  t.equal(moved.headers.location, '/openapi.json', 'to /openapi.json')
  t.equal(moved.body, '', 'without the document')
  assertError(t, await server.inject({ url: '/documentation/yaml' }), 404)
  t.ok(document.length > 1000)
})

t.test('GET /openapi.json: prepared once, in every coding a client may ask for; the same bytes for every answer', async (t) => {
  // The payload each answer is sent with, after every onSend hook of the app (compression's included).
  const sent: unknown[] = []
  const server = await build(t, {}, {
    onRoute (route) {
      if (route.url === '/openapi.json' && route.method === 'GET') route.onSend = [async (_request, _reply, payload) => { sent.push(payload); return payload }]
    }
  })
  const plain = await server.inject({ url: '/openapi.json', headers: { 'accept-encoding': 'identity' } })
  t.equal(plain.headers['content-encoding'], undefined)
  t.equal(plain.headers.vary, 'accept-encoding')
  const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync, deflate: zlib.inflateSync }
  for (const [header, coding] of [['br, gzip', 'br'], ['gzip, deflate', 'gzip'], ['deflate', 'deflate'], ['br;q=0.1, gzip', 'gzip']] as const) {
    const res = await server.inject({ url: '/openapi.json', headers: { 'accept-encoding': header } })
    t.equal(res.headers['content-encoding'], coding, header)
    t.equal(res.headers.vary, 'accept-encoding')
    t.equal(decode[coding](res.rawPayload).toString(), plain.body, `${coding}: the document`)
    t.equal(Number(res.headers['content-length']), res.rawPayload.length)
  }
  // (None acceptable at all, `*;q=0`: the document as it is rather than a 406.)
  for (const header of ['zstd', 'gzip;q=0, identity', '*;q=0', undefined]) {
    const res = await server.inject({ url: '/openapi.json', headers: header === undefined ? {} : { 'accept-encoding': header } })
    t.equal(res.headers['content-encoding'], undefined, `${header}: not encoded`)
    t.equal(res.body, plain.body)
  }
  sent.length = 0
  for (const coding of ['br', 'br', 'identity', 'identity']) await server.inject({ url: '/openapi.json', headers: { 'accept-encoding': coding } })
  t.ok(Buffer.isBuffer(sent[0]) && sent[0] === sent[1], 'br: one Buffer, compressed once, sent twice')
  t.ok(Buffer.isBuffer(sent[2]) && sent[2] === sent[3], 'identity: one Buffer, sent twice')

  const off = await build(t, { COMPRESSION: 'false' })
  const res = await off.inject({ url: '/openapi.json', headers: { 'accept-encoding': 'br' } })
  t.equal(res.headers['content-encoding'], undefined, 'COMPRESSION=false: as it is (the proxy compresses)')
  t.equal(res.headers.vary, undefined)
  t.equal(res.body, plain.body)
})
