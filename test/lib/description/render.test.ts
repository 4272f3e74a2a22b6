import fs from 'node:fs'
import t from 'tap'
import Fastify, { type RouteOptions } from 'fastify'
import config from '../../../plugins/config.js'
import description from '../../../plugins/description.js'
import { defaultServerOptions } from '../../helpers/index.js'
import {
  captureNames,
  codeBlock,
  formBody,
  renderDescription,
  renderEndpoint,
  typeName,
  wrap,
  type Introduction,
  type RouteDescription,
  type Schema
} from '../../../lib/description/render.js'
import { loadConfig } from '../../../lib/config/load.js'
import { describeRoutes, endpointPath } from '../../../lib/description/routes.js'

const GENERIC_ERROR = { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: 'querystring/sortby must be one of: age, name' }
const ErrorBody: Schema = {
  type: 'object',
  properties: { statusCode: { type: 'integer' }, error: { type: 'string' }, message: { type: 'string' } },
  examples: [GENERIC_ERROR]
}

const intro: Introduction = {
  title: 'example-api',
  version: '2.3.4',
  about: 'An API made for these tests.',
  realm: 'test-realm',
  bearerRequired: false,
  catchAll: true,
  errorExample: GENERIC_ERROR
}

const ok = (examples: unknown[], extra: Schema = {}): Record<string, Schema> => ({ 200: { type: 'object', examples, ...extra } })

/** The lines of a `## METHOD /path` section, up to the next section. */
function section (md: string, heading: string): string {
  const lines = md.split('\n')
  const start = lines.indexOf(heading)
  if (start < 0) throw new Error(`no ${heading}`)
  let end = start + 1
  while (end < lines.length && !/^#{1,2} /.test(lines[end] as string)) end++
  return lines.slice(start + 1, end).join('\n')
}

/** The lines of a `### Title` sub-section, up to the next heading. */
function sub (text: string, title: string): string | undefined {
  const lines = text.split('\n')
  const start = lines.indexOf(`### ${title}`)
  if (start < 0) return undefined
  let end = start + 1
  while (end < lines.length && !/^#{2,3} /.test(lines[end] as string)) end++
  return lines.slice(start + 1, end).join('\n')
}

const headings = (md: string) => md.split('\n').filter((line) => /^## /.test(line))

t.test('endpoints are sorted by path in code-unit order, then by method; HEAD-less, one section each', async (t) => {
  const routes: RouteDescription[] = [
    { method: 'GET', path: '/users/:userid', responses: ok([{}]) },
    { method: 'POST', path: '/users', responses: ok([{}]) },
    { method: 'GET', path: '/users', responses: ok([{}]) },
    { method: 'DELETE', path: '/users/:userid', responses: ok([{}]) },
    { method: 'GET', path: '/Zebra', responses: ok([{}]) },
    { method: 'GET', path: '/a', responses: ok([{}]) },
    { method: 'GET', path: '/users-list', responses: ok([{}]) },
    { method: 'GET', path: '/static/*', responses: ok([{}]) }
  ]
  t.same(headings(renderDescription(routes, intro)), [
    '## GET /Zebra', // 'Z' < 'a' in code units, not in a locale's order
    '## GET /a',
    '## GET /static/*',
    '## GET /users',
    '## POST /users',
    '## GET /users-list', // '-' < '/'
    '## DELETE /users/:userid',
    '## GET /users/:userid'
  ])
})

t.test('the page opens with the title and paragraphs of the introduction', async (t) => {
  const md = renderDescription([{ method: 'GET', path: '/a', responses: ok([1]) }], intro)
  const lines = md.split('\n')
  t.equal(lines[0], '# example-api')
  const before = md.slice(0, md.indexOf('\n## GET /a'))
  t.match(before, 'An API made for these tests. Version 2.3.4.')
  t.match(before, '`/openapi.json`', 'points to the OpenAPI document')
  t.match(before, '`/documentation`', 'and to its UI')
  t.match(before, '"message": "querystring/sortby must be one of: age, name"', 'shows the error body')
  t.match(before, /on this server both get this page instead/, 'says the catch-all is on')
  t.match(before, /Content negotiation: .*`Accept`/s)
  t.match(before, /realm `test-realm`/)
  t.match(before, /this one is not, so the header is ignored/)
  t.ok(md.endsWith('\n'), 'ends with a newline')

  const other = renderDescription([], { ...intro, catchAll: false, bearerRequired: true })
  t.notMatch(other, /this page instead/, 'catch-all off: not said')
  t.match(other, /API tokens, as this one is/)
  for (const line of other.split('\n')) {
    if (!line.startsWith('    ')) t.ok(line.length <= 100, `paragraph lines are wrapped: ${line}`)
  }
})

t.test('captures: every :name and the wildcard, with type and description; the schema\'s types win', async (t) => {
  const md = renderEndpoint({
    method: 'GET',
    path: '/position/:x/:y',
    captures: {
      type: 'object',
      properties: {
        x: { type: 'integer', description: 'The x coordinate', examples: [3] },
        y: { type: 'integer', description: 'The y coordinate' }
      }
    },
    responses: ok([{ xCoord: 3, yCoord: 4 }])
  }, intro)
  t.equal(sub(md, 'Captures:'), '\n- `x` (integer): The x coordinate\n    - Example: `3`\n- `y` (integer): The y coordinate\n')

  const undeclared = renderEndpoint({ method: 'GET', path: '/files/:name/*', responses: ok(['x']) }, intro)
  t.equal(sub(undeclared, 'Captures:'), '\n- `name` (string)\n- `*` (string): the rest of the path, slashes included\n', 'no schema: text captures')
  t.same(captureNames('/a/:b/c/:d_2/*'), ['b', 'd_2', '*'])
  t.same(captureNames('/plain'), [])
})

t.test('query parameters: titled with the method, required or optional, allowed values, lists', async (t) => {
  const md = renderEndpoint({
    method: 'DELETE',
    path: '/things',
    query: {
      type: 'object',
      required: ['force'],
      properties: {
        sortby: { type: 'string', enum: ['age', 'name'], description: 'The order' },
        force: { type: 'boolean' },
        tag: { type: 'array', items: { type: 'string' }, examples: [['a', 'b']] },
        count: { type: 'integer', minimum: 0, maximum: 10, default: 3 }
      }
    },
    responses: { 204: { type: 'null' } }
  }, intro)
  t.equal(sub(md, 'GET Parameters:'), undefined, 'the method is substituted')
  t.equal(sub(md, 'DELETE Parameters:'), [
    '',
    '- `sortby` (string, optional): The order',
    '    - Allowed values: `age`, `name`',
    '- `force` (boolean, required)',
    '- `tag` (list of string, optional)',
    '    - A list: repeat the name once per value.',
    '    - Example: `["a","b"]`',
    '- `count` (integer, from 0 to 10, optional)',
    '    - Default: `3`',
    ''
  ].join('\n'))
})

t.test('request: authentication, headers read, body content types and an example body per type', async (t) => {
  const client = { clientName: 'Alp Mestanogullari', clientEmail: 'alp@foo.com', clientAge: 25, clientInterestedIn: ['haskell', 'mathematics'] }
  const md = renderEndpoint({
    method: 'POST',
    path: '/marketing',
    auth: 'basic',
    headers: { type: 'object', properties: { 'User-Agent': { type: 'string', description: 'Who asks' } } },
    consumes: ['application/json', 'application/x-www-form-urlencoded'],
    body: { type: 'object', examples: [client] },
    responses: ok([{}])
  }, intro)
  const request = sub(md, 'Request:') ?? ''
  t.match(request, '- Authentication: HTTP Basic Authentication, realm `test-realm` (401 without valid credentials)')
  t.match(request, '- Headers:\n    - `User-Agent` (string, optional): Who asks')
  t.match(request, '- Supported content types are:\n    - `application/json`\n    - `application/x-www-form-urlencoded`')
  t.match(request, '- Example (`application/json`):\n\n    ```json\n    {\n      "clientName": "Alp Mestanogullari",')
  t.match(request, '- Example (`application/x-www-form-urlencoded`):\n\n    ```\n    ' +
    'clientName=Alp+Mestanogullari&clientEmail=alp%40foo.com&clientAge=25&clientInterestedIn=haskell&clientInterestedIn=mathematics\n    ```')

  const json = renderEndpoint({ method: 'PUT', path: '/items/:id', body: { type: 'object', examples: [{ n: 1 }] }, responses: ok([{}]) }, intro)
  t.match(sub(json, 'Request:'), '- Supported content types are:\n    - `application/json`\n', 'a body schema without consumes: JSON')

  const optional = renderEndpoint({ method: 'GET', path: '/b', consumes: ['application/json'], responses: ok(['hi']) }, intro)
  t.match(sub(optional, 'Request:'), '- The body is optional.', 'consumes without a body schema: an optional body')

  const bearer = (bearerRequired: boolean) =>
    sub(renderEndpoint({ method: 'POST', path: '/products', auth: 'bearer', responses: ok([{}]) }, { ...intro, bearerRequired }), 'Request:')
  t.match(bearer(true), '`Authorization: Bearer <token>` with one of the server\'s API tokens (401 without one)')
  t.match(bearer(false), 'this one has none, so none is needed')
})

t.test('response: statuses in order, headers, content types, an example per type, error bodies per status', async (t) => {
  const users = [{ name: 'Isaac', age: 372 }, { name: 'Albert', age: 136 }]
  const md = renderEndpoint({
    method: 'GET',
    path: '/users',
    produces: ['application/json', 'text/plain', 'application/octet-stream', 'image/png'],
    serializers: {
      'text/plain': (list: typeof users) => list.map((user) => `${user.name}, ${user.age}\n`).join(''),
      'application/octet-stream': JSON.stringify
    },
    responses: {
      406: ErrorBody,
      200: {
        type: 'array',
        headers: { 'User-Count': { type: 'integer', description: 'How many users' } },
        examples: [users]
      },
      401: { ...ErrorBody, examples: [{ statusCode: 401, error: 'Unauthorized', message: 'wrong password' }] },
      400: ErrorBody
    }
  }, intro)
  const response = sub(md, 'Response:') ?? ''
  const statuses = [...response.matchAll(/^- Status code (\d+)/gm)].map((match) => match[1])
  t.same(statuses, ['200', '400', '401', '406'], 'numeric order')
  t.match(response, '- Status code 200 (OK)\n- Headers:\n    - `User-Count` (integer): How many users\n')
  t.match(response, [
    '- Supported content types are:',
    '    - `application/json; charset=utf-8`',
    '    - `text/plain; charset=utf-8`',
    '    - `application/octet-stream`',
    '    - `image/png`'
  ].join('\n'), 'the produced types, as Content-Type headers')
  t.match(response, '- Example (`application/json`):\n\n    ```json\n    [\n      {\n        "name": "Isaac",\n        "age": 372\n      },')
  t.match(response, '- Example (`text/plain`):\n\n    ```\n    Isaac, 372\n    Albert, 136\n    ```', 'the route\'s serializer')
  t.match(response, '- Example (`application/octet-stream`):\n\n    ```\n    [{"name":"Isaac","age":372},{"name":"Albert","age":136}]\n    ```')
  t.notMatch(response, 'Example (`image/png`)', 'no example for a type nothing can write')
  t.match(response, '- Status code 400 (Bad Request)\n- Supported content types are:\n    - `application/json; charset=utf-8`\n\n- Example (`application/json`):\n\n' +
    '    ```json\n    {"statusCode":400,"error":"Bad Request","message":"<what was wrong>"}\n    ```', 'errors are JSON; the shared example is not this route\'s')
  t.match(response, '{"statusCode":401,"error":"Unauthorized","message":"wrong password"}', 'a route\'s own error example is kept')
  t.match(response, '{"statusCode":406,"error":"Not Acceptable","message":"<what was wrong>"}', 'an example of another status is relabelled')
})

t.test('response: no body, media types declared per status, streams, several examples', async (t) => {
  const md = renderEndpoint({
    method: 'GET',
    path: '/mixed',
    produces: ['application/json'],
    responses: {
      200: { type: 'string', examples: ['"hi"', true] },
      204: { type: 'null', description: 'Nothing', headers: { Location: { type: 'string' } } },
      404: { description: 'Not there', content: { 'text/plain': { schema: { type: 'string', examples: ['gone away'] } } } }
    }
  }, intro)
  const response = sub(md, 'Response:') ?? ''
  t.match(response, '- Status code 204 (No Content): Nothing\n- Headers:\n    - `Location` (string)\n- No body.')
  t.match(response, '- Status code 404 (Not Found): Not there\n- Supported content types are:\n    - `text/plain; charset=utf-8`\n\n' +
    '- Example (`text/plain`):\n\n    ```\n    gone away\n    ```', 'a status with its own media types')
  t.equal(response.split('- Example (`application/json`)').length - 1, 2, 'one block per example')

  const stream = renderEndpoint({
    method: 'GET',
    path: '/userStream',
    produces: ['application/x-ndjson', 'application/json'],
    responses: { 200: { type: 'object', examples: [[{ a: 1 }, { a: 2 }]] } }
  }, intro)
  t.match(sub(stream, 'Response:'), '- Example (`application/x-ndjson`, `application/json`):\n\n    ```json\n    {"a":1}\n    {"a":2}\n    ```',
    'a stream: one JSON value per line, whatever its label; identical bodies share a block')

  const bare = renderEndpoint({ method: 'GET', path: '/static/*' }, intro)
  t.equal(sub(bare, 'Response:'), '\n- Status code 200 (OK)', 'no response schema: the status, nothing made up')

  const file = renderEndpoint({
    method: 'GET',
    path: '/static/*',
    responses: { 200: { type: 'string', format: 'binary', description: 'The file', examples: ['Hello from a file.\n'] } }
  }, intro)
  t.equal(sub(file, 'Response:'), '\n- Status code 200 (OK): The file\n\n- Example:\n\n    ```\n    Hello from a file.\n    ```',
    'a file: its media type is the file\'s, not a list; its example as it is')
})

t.test('sub-sections with nothing to say are left out; Response never is', async (t) => {
  const md = renderEndpoint({ method: 'GET', path: '/a', summary: 'The number 1797', responses: ok([1797]) }, intro)
  t.equal(md, [
    '## GET /a',
    '',
    'The number 1797',
    '',
    '### Response:',
    '',
    '- Status code 200 (OK)',
    '- Supported content types are:',
    '    - `application/json; charset=utf-8`',
    '',
    '- Example (`application/json`):',
    '',
    '    ```json',
    '    1797',
    '    ```'
  ].join('\n'))
  const twice = renderEndpoint({ method: 'GET', path: '/a', summary: 'Same', description: 'Same', responses: ok([1]) }, intro)
  t.equal(twice.split('Same').length - 1, 1, 'a description equal to the summary is said once')
})

t.test('example bodies cannot pass for headings or close their block early', async (t) => {
  const text = '# Not a title\n## GET /not-a-section\nsome ``` fence\n\nlast'
  const block = codeBlock(text)
  for (const line of block.split('\n')) t.ok(line === '' || line.startsWith('    '), `indented: ${line}`)
  t.match(block, /^ {4}````\n/, 'the fence is longer than any backtick run inside')
  t.ok(block.endsWith('\n    ````'))

  const md = renderDescription([{
    method: 'GET',
    path: '/docs',
    produces: ['text/plain'],
    responses: { 200: { type: 'string', examples: [text] } }
  }], intro)
  t.same(headings(md), ['## GET /docs'])
  t.match(section(md, '## GET /docs'), '### Response:')
})

t.test('helpers: type names, form bodies, wrapping', async (t) => {
  t.equal(typeName({ type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }), 'integer', 'safe-integer bounds go unsaid')
  t.equal(typeName({ type: 'integer', minimum: 0 }), 'integer, at least 0')
  t.equal(typeName({ type: 'number', maximum: 5 }), 'number, at most 5')
  t.equal(typeName({ type: 'string', format: 'date' }), 'string, date')
  t.equal(typeName({ type: ['string', 'null'] }), 'string or null')
  t.equal(typeName({ anyOf: [{ type: 'string' }, { type: 'boolean' }] }), 'string or boolean')
  t.equal(typeName({ const: 'ok', type: 'string' }), 'the constant `ok`')
  t.equal(typeName({ type: 'array' }), 'list of any JSON value')
  t.equal(typeName({}), 'any JSON value')

  t.equal(formBody({ a: 'x y', list: ['1', 2], n: 3 }), 'a=x+y&list=1&list=2&n=3')
  t.equal(formBody([1, 2]), undefined, 'only an object is a form')

  t.equal(wrap('aaa bbb ccc', 7), 'aaa bbb\nccc')
  t.equal(wrap('one `two three` four', 10), 'one\n`two three`\nfour', 'a code span is never split')
  t.equal(wrap('averyveryverylongword x', 5), 'averyveryverylongword\nx')
})

t.test('a serializer that fails on an example shows no example for its type; status ranges come last', async (t) => {
  const md = renderEndpoint({
    method: 'GET',
    path: '/odd',
    produces: ['application/json', 'text/csv'],
    serializers: { 'text/csv': () => { throw new Error('no') } },
    responses: { default: ErrorBody, '2XX': { type: 'object', examples: [{ a: 1 }] }, 200: { type: 'object', examples: [{ a: 1 }] } }
  }, intro)
  t.same([...md.matchAll(/^- Status code (\S+)/gm)].map((match) => match[1]), ['200', '2XX', 'default'])
  t.notMatch(md, 'Example (`text/csv`)')
  t.match(md, 'Example (`application/json`)')
})

t.test('a route with every part, rendered whole: the page\'s exact words', async (t) => {
  const RICH: RouteDescription = {
    method: 'PUT',
    path: '/things/:id',
    summary: 'Replace a thing',
    captures: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1, maximum: 99, description: 'The thing' } } },
    query: {
      type: 'object',
      properties: {
        mode: { anyOf: [{ const: 'fast' }, { const: 'slow' }] },
        when: { type: 'string', format: 'date', examples: ['2024-01-02'] },
        tags: { type: 'array', items: { type: 'string' }, examples: [['a', 'b'], ['c']] },
        size: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
      }
    },
    headers: { type: 'object', required: ['x-token'], properties: { 'x-token': { type: 'string' }, 'x-note': { type: 'string', description: 'Free text' } } },
    optionalBody: { type: 'object', description: 'The new thing', examples: [{ name: 'Lamp', parts: [1, 2] }] },
    bodyLimit: 2048,
    consumes: ['application/json', 'application/x-www-form-urlencoded', 'application/octet-stream'],
    produces: ['application/json'],
    responses: {
      200: {
        type: 'object',
        headers: { type: 'object', required: ['etag'], properties: { etag: { type: 'string' }, 'x-warning': { type: 'string', description: 'Why' } } },
        examples: [{ name: 'Lamp' }, { name: 'Desk' }],
        'x-example-titles': ['A lamp']
      },
      299: { type: 'object', description: 'A status of our own' },
      404: { type: 'object', examples: [{ statusCode: 404, error: 'Not Found', message: 'No thing 7' }] },
      409: { type: 'object', examples: [{ statusCode: 404, error: 'Not Found', message: 'No thing 7' }] }
    }
  }
  // The page's words for it, as a reader sees them: every-part.md beside this file.
  t.equal(renderEndpoint(RICH, intro) + '\n', fs.readFileSync(new URL('every-part.md', import.meta.url), 'utf8'))
  t.notMatch(renderEndpoint({ method: 'GET', path: '/x', bodyLimit: 0, responses: { 200: { type: 'string' } } }, intro), 'At most', 'no body: no limit to tell')
})

t.test('describeRoutes: one endpoint per method and path; HEAD and hidden routes left out', async (t) => {
  const noop = () => {}
  const route = (method: RouteOptions['method'], url: string, schema: RouteOptions['schema'] = {}, config = {}): RouteOptions =>
    ({ method, url, schema, config, handler: noop })
  const described = describeRoutes([
    route('GET', '/users', { summary: 'Users', produces: ['application/json', 'application/octet-stream'] },
      { serializers: { 'application/octet-stream': 'schema' }, auth: 'basic' }),
    route('HEAD', '/users'),
    route(['GET', 'HEAD'], '/static/*'),
    route('GET', '/documentation', { hide: true }),
    route('GET', '/users/'),
    route('delete', '/items/:id(^\\d+$)')
  ])
  t.same(described.map(({ method, path }) => `${method} ${path}`), ['DELETE /items/:id', 'GET /static/*', 'GET /users'])
  const users = described.find(({ path }) => path === '/users')
  t.match(users, { summary: 'Users', auth: 'basic', produces: ['application/json', 'application/octet-stream'] })
  t.equal(users?.serializers?.['application/octet-stream']?.([1, 'a']), '[1,"a"]', '\'schema\': the JSON text')

  t.equal(endpointPath('/a/:id(^\\d+$)/b'), '/a/:id/b', 'no regular expression')
  t.equal(endpointPath('/a/:x((a|b))-:y(\\d+)'), '/a/:x-:y')
  t.equal(endpointPath('/time::now'), '/time:now', 'an escaped colon')
  t.equal(endpointPath('/users/'), '/users')
  t.equal(endpointPath('/'), '/')
})

t.test('the plugin renders the page when the server is ready, not before', async (t) => {
  const server = Fastify({ ...defaultServerOptions, logger: false })
  t.teardown(() => server.close())
  await server.register(config, { config: loadConfig({}) })
  await server.register(description)
  server.get('/here', { schema: { summary: 'Here' } }, async () => 'here')
  await server.after()
  t.throws(() => server.apiDescription, /rendered when the server is ready/)
  await server.ready()
  t.match(server.apiDescription.markdown, /^## GET \/here\n\nHere\n/m)
  t.same(server.apiDescription.routes.map(({ path }) => path), ['/here'])
  t.ok(server.apiDescription.renderMilliseconds > 0, `the time it took is kept: ${server.apiDescription.renderMilliseconds} ms`)
})
