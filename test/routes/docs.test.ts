import t from 'tap'
import type { Test } from 'tap'
import MarkdownIt from 'markdown-it'
import { assertError, build, logSink, walkRoutes } from '../helpers/index.js'

const TEXT = 'text/plain; charset=utf-8'

/** The whole app, its endpoints walked independently of the description plugin, and its logs. */
async function walk (t: Test, env: Record<string, string> = {}) {
  const logs = logSink()
  const { server, endpoints } = await walkRoutes(t, env, logs.logger)
  return { server, endpoints: [...new Set(endpoints.map(({ method, url }) => `${method} ${url}`))], logs: logs.entries }
}

/** The lines of a `## METHOD /path` section, up to the next section (as a reader of the page would cut it). */
function section (md: string, heading: string): string {
  const lines = md.split('\n')
  const start = lines.indexOf(heading)
  if (start < 0) throw new Error(`no "${heading}" section`)
  let end = start + 1
  while (end < lines.length && !/^#{1,2} /.test(lines[end] as string)) end++
  return lines.slice(start + 1, end).join('\n')
}

/** The lines of a `### Title` sub-section, up to the next heading. */
function sub (text: string, title: string): string {
  const lines = text.split('\n')
  const start = lines.indexOf(`### ${title}`)
  if (start < 0) throw new Error(`no "### ${title}" sub-section`)
  let end = start + 1
  while (end < lines.length && !/^#{2,3} /.test(lines[end] as string)) end++
  return lines.slice(start + 1, end).join('\n')
}

t.test('GET /docs serves the page, whatever DOCS_CATCH_ALL says', async (t) => {
  for (const DOCS_CATCH_ALL of ['true', 'false']) {
    const server = await build(t, { DOCS_CATCH_ALL })
    const res = await server.inject({ url: '/docs' })
    t.equal(res.statusCode, 200, `DOCS_CATCH_ALL=${DOCS_CATCH_ALL}`)
    t.equal(res.headers['content-type'], TEXT)
    t.match(res.body, /^# servant-example-api\n\n/, 'opens with the title')
    t.match(res.body, /^## GET \/position\/:x\/:y$/m)
    t.equal((await server.inject({ url: '/docs/' })).body, res.body, 'trailing slash')
  }
})

t.test('catch-all on (the default): no route or no method gets the page, 200 text/plain', async (t) => {
  const server = await build(t)
  const page = (await server.inject({ url: '/docs' })).body
  t.match(page, /^# /)
  for (const [method, url] of [
    ['GET', '/no-such-path'],
    ['GET', '/hello/extra/segments'],
    ['POST', '/nowhere?x=1'],
    ['DELETE', '/hello'],
    ['POST', '/health'],
    ['PUT', '/colors'],
    ['PATCH', '/docs'],
    ['POST', '/static/some-file.txt']
  ] as const) {
    const res = await server.inject({ method, url })
    t.equal(res.statusCode, 200, `${method} ${url}`)
    t.equal(res.headers['content-type'], TEXT, `${method} ${url}: text/plain`)
    t.equal(res.body, page, `${method} ${url}: the page`)
    t.notOk(res.headers.allow, `${method} ${url}: no Allow`)
  }
  const head = await server.inject({ method: 'HEAD', url: '/no-such-path' })
  t.equal(head.statusCode, 200, 'HEAD: 200')
  t.equal(head.headers['content-type'], TEXT)
  t.equal(head.body, '', 'HEAD: no body')
})

t.test('catch-all off: 404 and 405 JSON errors', async (t) => {
  const server = await build(t, { DOCS_CATCH_ALL: 'false' })
  assertError(t, await server.inject({ url: '/no-such-path' }), 404, '/no-such-path')
  const head = await server.inject({ method: 'HEAD', url: '/no-such-path' })
  t.equal(head.statusCode, 404, 'HEAD: 404')
  t.equal(head.body, '', 'HEAD: no body')
  const wrong = await server.inject({ method: 'DELETE', url: '/hello' })
  assertError(t, wrong, 405, 'DELETE')
  t.equal(wrong.headers.allow, 'GET, HEAD')
  assertError(t, await server.inject({ method: 'PATCH', url: '/docs' }), 405)
})

t.test('in production the catch-all is off unless asked for: probes and typos get 404 JSON', async (t) => {
  const server = await build(t, { NODE_ENV: 'production', STORE: 'memory' })
  for (const url of ['/healthz', '/metricz', '/usrs']) assertError(t, await server.inject({ url }), 404, url)
  assertError(t, await server.inject({ method: 'DELETE', url: '/hello' }), 405)
  t.equal((await server.inject({ url: '/docs' })).statusCode, 200, '/docs still serves the page')
  const asked = await build(t, { NODE_ENV: 'production', STORE: 'memory', DOCS_CATCH_ALL: 'true' })
  t.equal((await asked.inject({ url: '/usrs' })).statusCode, 200, 'DOCS_CATCH_ALL=true turns it on')
})

t.test('a missing file of /static/ is a 404 JSON error, catch-all on or off', async (t) => {
  for (const DOCS_CATCH_ALL of ['true', 'false']) {
    const server = await build(t, { DOCS_CATCH_ALL })
    for (const url of ['/static/missing.txt', '/static/no/such/dir/file.css']) {
      assertError(t, await server.inject({ url }), 404)
    }
    t.equal((await server.inject({ method: 'HEAD', url: '/static/missing.txt' })).statusCode, 404, 'HEAD')
  }
})

t.test('every registered route has exactly one section, in path-then-method order', async (t) => {
  const { server, endpoints } = await walk(t)
  t.ok(endpoints.length >= 30, `the walk found the routes (${endpoints.length})`)
  t.ok(endpoints.includes('GET /static/*'), 'the static area is one of them')
  const md = (await server.inject({ url: '/docs' })).body
  const lines = md.split('\n')
  for (const endpoint of endpoints) {
    t.equal(lines.filter((line) => line === `## ${endpoint}`).length, 1, `## ${endpoint}`)
  }
  const headings = lines.filter((line) => /^## /.test(line)).map((line) => line.slice(3))
  t.same([...headings].sort(), [...endpoints].sort(), 'and nothing else')
  const key = (heading: string) => {
    const [method, path] = heading.split(' ') as [string, string]
    return [path, method] as const
  }
  const order = [...headings].sort((a, b) => {
    const [[p, m], [q, n]] = [key(a), key(b)]
    return p < q ? -1 : p > q ? 1 : m < n ? -1 : m > n ? 1 : 0
  })
  t.same(headings, order, 'sorted by path in code-unit order, then by method')
  t.notOk(headings.some((heading) => heading.startsWith('HEAD ')), 'no HEAD section')
  t.notOk(headings.some((heading) => heading.includes('/documentation')), 'Swagger UI\'s routes are hidden')
})

t.test('every section has a Response whose every status shows an example body or says it has none', async (t) => {
  const { server, endpoints } = await walk(t)
  const md = (await server.inject({ url: '/docs' })).body
  for (const endpoint of endpoints) {
    const response = sub(section(md, `## ${endpoint}`), 'Response:')
    const statuses = response.trim().split(/\n(?=- Status code )/).map((status) => status.trim())
    t.ok(statuses.length > 0 && statuses[0]?.startsWith('- Status code '), `${endpoint}: a status`)
    for (const status of statuses) {
      const line = status.split('\n', 1)[0]
      t.ok(/\n- No body\.$/.test(status) || /\n- (Example|When [^\n(]+)( \(`[^`]+`(, `[^`]+`)*\))?:\n\n {4}`{3,}/.test(status), `${endpoint}: ${line}: an example body`)
    }
  }
})

t.test('/position/:x/:y, /hello and /marketing show their captures, parameters and examples', async (t) => {
  const server = await build(t)
  const md = (await server.inject({ url: '/docs' })).body

  const position = section(md, '## GET /position/:x/:y')
  const captures = sub(position, 'Captures:')
  t.match(captures, /^- `x` \(integer\)/m, 'x, an integer')
  t.match(captures, /^- `y` \(integer\)/m, 'y, an integer')
  t.match(sub(position, 'Response:'), /- Example \(`application\/json`\):\n\n {4}```json\n {4}\{\n {6}"xCoord": -?\d+,\n {6}"yCoord": -?\d+\n {4}\}/)

  const hello = section(md, '## GET /hello')
  t.match(sub(hello, 'GET Parameters:'), /^- `name` \(string, optional\)/m)
  t.match(sub(hello, 'Response:'), /"msg": "Hello, /)

  const request = sub(section(md, '## POST /marketing'), 'Request:')
  t.match(request, '- Supported content types are:\n    - `application/json`\n    - `application/x-www-form-urlencoded`')
  t.match(request, /- Example \(`application\/json`\):\n\n {4}```json\n {4}\{\n {6}"clientName": /, 'a JSON example body')
  t.match(request, /- Example \(`application\/x-www-form-urlencoded`\):\n\n {4}```\n {4}clientName=[^\n]*&clientInterestedIn=/, 'the same as a form')
})

// How long it takes is for the log line and the benches (about 10 ms here), not for a timed test:
// a bound failed here at 63 ms when CI's cores were busy.
t.test('the page is rendered once, at start-up, and the time it took is logged', async (t) => {
  const { server, endpoints, logs } = await walk(t)
  const rendered = logs.filter((entry) => entry.msg === 'description page rendered')
  t.equal(rendered.length, 1, 'rendered once')
  t.match(rendered[0], { level: 30, endpoints: endpoints.length, renderMs: Number }, 'logged at info')
  const renderMs = rendered[0]?.renderMs as number
  t.ok(renderMs > 0, `rendered in ${renderMs} ms`)
  await server.inject({ url: '/docs' })
  await server.inject({ url: '/unknown' })
  t.equal(logs.filter((entry) => entry.msg === 'description page rendered').length, 1, 'not rendered again per request')
})

/** The page as a CommonMark renderer (markdown-it) shows it. */
function rendered (md: string): string {
  return new MarkdownIt('commonmark').render(md)
}

t.test('the page renders cleanly in CommonMark: code blocks are code, no text is taken for HTML', async (t) => {
  const server = await build(t)
  const md = (await server.inject({ url: '/docs' })).body
  const html = rendered(md)
  const fences = md.split('\n').filter((line) => /^\s*`{3,}/.test(line)).length
  t.ok(fences > 50, `the page has fenced blocks (${fences / 2})`)
  t.equal((html.match(/<pre><code/g) ?? []).length, fences / 2, 'every fenced block is a code block')
  t.notMatch(html.replace(/<pre><code[^>]*>[\s\S]*?<\/code><\/pre>/g, ''), /```/, 'no fence shows as text outside them')
  const intro = html.slice(0, html.indexOf('<h2>'))
  t.match(intro, /<pre><code class="language-json">\{\n {2}&quot;statusCode&quot;: 400,/, 'the error example is a JSON code block')
  const tags = new Set(Array.from(html.matchAll(/<\/?([a-z][a-z0-9]*)/g), (match) => match[1]))
  t.same([...tags].filter((tag) => !['h1', 'h2', 'h3', 'p', 'ul', 'li', 'code', 'pre', 'em', 'strong'].includes(tag as string)), [],
    'only the tags of Markdown: no placeholder like <prefix> or <id> is taken for HTML')
})

t.test('what the page says matches this server\'s settings: realm, bearer tokens', async (t) => {
  const withoutTokens = (await (await build(t, { AUTH_REALM: 'test-realm' })).inject({ url: '/docs' })).body
  const listAll = sub(section(withoutTokens, '## GET /users/list-all'), 'Response:')
  t.match(listAll, '- `WWW-Authenticate` (the constant `Basic realm="test-realm"`, always sent)', 'the challenge of this realm')
  t.match(listAll, 'wrong for realm test-realm', 'and the example message')
  t.notMatch(withoutTokens, /<AUTH_REALM>|my-realm/, 'no placeholder, no other realm')
  const post = section(withoutTokens, '## POST /products')
  t.notMatch(sub(post, 'Response:'), /Status code 401/, 'without API_TOKENS, writes on /products answer no 401')
  t.match(sub(post, 'Request:'), /this one has none, so none is needed/)

  const withTokens = (await (await build(t, { API_TOKENS: 'secret-token' })).inject({ url: '/docs' })).body
  const write = sub(section(withTokens, '## POST /products'), 'Response:')
  t.match(write, /- Status code 401 \(Unauthorized\): Missing, malformed or wrong credentials \(Bearer\)/, 'with API_TOKENS, they do')
  t.match(write, '`Bearer realm="my-realm"`')

  const production = (await (await build(t, { NODE_ENV: 'production', STORE: 'memory' })).inject({ url: '/docs' })).body
  t.match(sub(section(production, '## POST /products'), 'Response:'), /- Status code 401 \(Unauthorized\)/, 'in production, where writes need a token even without API_TOKENS, they do too')
})

t.test('examples carry titles in servant-docs\' manner; GET /b shows its optional body', async (t) => {
  const md = (await (await build(t)).inject({ url: '/docs' })).body
  const hello = sub(section(md, '## GET /hello'), 'Response:')
  t.match(hello, '- When a value is provided for \'name\' (`application/json`):\n\n    ```json\n    {\n      "msg": "Hello, Alp"\n    }')
  t.match(hello, '- When \'name\' is not specified (`application/json`):\n\n    ```json\n    {\n      "msg": "Hello, anonymous coward"\n    }')
  const b = sub(section(md, '## GET /b'), 'Request:')
  t.match(b, '- The body is optional: number.')
  t.match(b, '- Example (`application/json`):\n\n    ```json\n    42\n    ```')
})
