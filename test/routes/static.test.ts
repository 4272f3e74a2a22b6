import fs from 'node:fs/promises'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { assertError, build } from '../helpers/index.js'
import { projectRoot } from '../../lib/project-root.js'

const SECRET = 'top secret, outside the static area'

/**
 * A STATIC_DIR of the test's own, inside a directory that also holds `secret.txt` (and a copy of
 * it one level further out): what a path escaping the static area would reach.
 */
async function staticArea (t: Test): Promise<string> {
  const outer = await fs.mkdtemp(path.join(os.tmpdir(), 'static-'))
  t.teardown(() => fs.rm(outer, { recursive: true, force: true }))
  const root = path.join(outer, 'area', 'public')
  await fs.mkdir(path.join(root, 'sub'), { recursive: true })
  await fs.mkdir(path.join(root, '.git'))
  await fs.writeFile(path.join(outer, 'secret.txt'), SECRET)
  await fs.writeFile(path.join(outer, 'area', 'secret.txt'), SECRET)
  await fs.writeFile(path.join(root, 'hello.txt'), 'hello\n')
  await fs.writeFile(path.join(root, 'data.json'), '{"a":1}')
  await fs.writeFile(path.join(root, 'page.html'), '<p>hi</p>')
  await fs.writeFile(path.join(root, 'style.css'), 'p{}')
  await fs.writeFile(path.join(root, 'pixel.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
  await fs.writeFile(path.join(root, 'blob.unknownext'), 'x')
  await fs.writeFile(path.join(root, 'with space.txt'), 'spaced')
  await fs.writeFile(path.join(root, 'sub', 'deep.txt'), 'deep')
  await fs.writeFile(path.join(root, '.env'), 'SECRET=1')
  await fs.writeFile(path.join(root, '.git', 'config'), '[core]')
  return root
}

/** Sends exactly this request line over a socket (no client-side normalisation of the path). */
async function rawGet (port: number, target: string): Promise<{ status: number, head: string, body: string }> {
  const socket = net.connect(port, '127.0.0.1')
  // Not end(): node:http may close a half-closed connection without answering.
  socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  const [head = '', body = ''] = text.split('\r\n\r\n', 2)
  return { status: Number(head.slice(9, 12)), head, body }
}

t.test('the project\'s static/hello.txt, by default', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/static/hello.txt' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.body, await fs.readFile(path.join(projectRoot, 'static', 'hello.txt'), 'utf8'))
})

t.test('a file: its bytes, a Content-Type by extension, ETag and Last-Modified', async (t) => {
  const root = await staticArea(t)
  const app = await build(t, { STATIC_DIR: root })
  const types: Array<[string, string, string]> = [
    ['/static/hello.txt', 'text/plain; charset=utf-8', 'hello\n'],
    ['/static/data.json', 'application/json; charset=utf-8', '{"a":1}'],
    ['/static/page.html', 'text/html; charset=utf-8', '<p>hi</p>'],
    ['/static/style.css', 'text/css; charset=utf-8', 'p{}'],
    ['/static/pixel.png', 'image/png', '\x89PNG'],
    ['/static/blob.unknownext', 'application/octet-stream', 'x'],
    ['/static/sub/deep.txt', 'text/plain; charset=utf-8', 'deep'],
    ['/static/with%20space.txt', 'text/plain; charset=utf-8', 'spaced']
  ]
  for (const [url, type, body] of types) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], type, url)
    t.same(res.rawPayload, Buffer.from(body, 'latin1'), url)
    t.match(res.headers.etag, /^(W\/)?"[^"]+"$/, `${url}: ETag`)
    t.ok(Date.parse(String(res.headers['last-modified'])) > 0, `${url}: Last-Modified`)
  }
})

t.test('HEAD: the headers of GET, no body', async (t) => {
  const root = await staticArea(t)
  const app = await build(t, { STATIC_DIR: root })
  const res = await app.inject({ method: 'HEAD', url: '/static/hello.txt' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.headers['content-length'], '6')
  t.ok(res.headers.etag)
  t.equal(res.body, '')
})

t.test('conditional requests: 304 with an empty body; a changed file is sent again', async (t) => {
  const root = await staticArea(t)
  const app = await build(t, { STATIC_DIR: root })
  const first = await app.inject({ url: '/static/hello.txt' })
  const etag = String(first.headers.etag)
  const lastModified = String(first.headers['last-modified'])

  const byEtag = await app.inject({ url: '/static/hello.txt', headers: { 'if-none-match': etag } })
  t.equal(byEtag.statusCode, 304, 'If-None-Match')
  t.equal(byEtag.body, '')
  const byDate = await app.inject({ url: '/static/hello.txt', headers: { 'if-modified-since': lastModified } })
  t.equal(byDate.statusCode, 304, 'If-Modified-Since')
  t.equal(byDate.body, '')
  const headByEtag = await app.inject({ method: 'HEAD', url: '/static/hello.txt', headers: { 'if-none-match': etag } })
  t.equal(headByEtag.statusCode, 304, 'HEAD + If-None-Match')

  t.equal((await app.inject({ url: '/static/hello.txt', headers: { 'if-none-match': '"other"' } })).statusCode, 200, 'another ETag')
  await fs.writeFile(path.join(root, 'hello.txt'), 'changed, and longer\n')
  await fs.utimes(path.join(root, 'hello.txt'), new Date(), new Date(Date.now() + 10_000))
  const changed = await app.inject({ url: '/static/hello.txt', headers: { 'if-none-match': etag } })
  t.equal(changed.statusCode, 200, 'the old ETag no longer matches')
  t.equal(changed.body, 'changed, and longer\n')
})

t.test('byte ranges are honoured; other errors stay JSON errors of their own status', async (t) => {
  const root = await staticArea(t)
  const app = await build(t, { STATIC_DIR: root })
  const res = await app.inject({ url: '/static/hello.txt', headers: { range: 'bytes=0-3' } })
  t.equal(res.statusCode, 206)
  t.equal(res.body, 'hell')
  t.equal(res.headers['content-range'], 'bytes 0-3/6')
  const unsatisfiable = await app.inject({ url: '/static/hello.txt', headers: { range: 'bytes=100-200' } })
  assertError(t, unsatisfiable, 416)
})

t.test('no such file: a 404 JSON error, with the catch-all off and on', async (t) => {
  const root = await staticArea(t)
  for (const DOCS_CATCH_ALL of ['false', 'true']) {
    const app = await build(t, { STATIC_DIR: root, DOCS_CATCH_ALL })
    const missing = [
      '/static/missing.txt', '/static/sub/missing.txt', '/static/hello.txt/more',
      // directories: no listing, no index
      '/static/sub', '/static/sub/', '/static/', '/static',
      // dot-files and dot-directories
      '/static/.env', '/static/.git/config', '/static/sub/.hidden', '/static/%2eenv'
    ]
    for (const url of missing) {
      const res = await app.inject({ url })
      t.equal(res.statusCode, 404, `${url} (catch-all ${DOCS_CATCH_ALL})`)
      assertError(t, res, 404)
      t.notOk(res.headers.allow, `${url}: no Allow`)
    }
    const head = await app.inject({ method: 'HEAD', url: '/static/missing.txt' })
    t.equal(head.statusCode, 404, 'HEAD of a missing file')
    t.equal(head.body, '')
  }
})

t.test('no path leaves the static area: 404 JSON, never the file', async (t) => {
  const root = await staticArea(t)
  const app = await build(t, { STATIC_DIR: root, DOCS_CATCH_ALL: 'false' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const targets = [
    '/static/../secret.txt',
    '/static/../../secret.txt',
    '/static/sub/../../secret.txt',
    '/static/%2e%2e/secret.txt',
    '/static/%2E%2E/%2E%2E/secret.txt',
    '/static/.%2e/secret.txt',
    '/static/..%2fsecret.txt',
    '/static/..%2Fsecret.txt',
    '/static/%2e%2e%2fsecret.txt',
    '/static/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/static/..%5csecret.txt',
    '/static/%2e%2e%5c%2e%2e%5csecret.txt',
    '/static/..\\secret.txt',
    '/static/sub\\..\\..\\secret.txt',
    '/static/%252e%252e/secret.txt',
    '/static/%252e%252e%252fsecret.txt',
    '/static/..%00/secret.txt',
    '/static/hello.txt%00',
    '/static/hello.txt%00.png',
    '/static/%00',
    '/static/....//secret.txt',
    '/static//secret.txt',
    '/static/' + encodeURIComponent(path.join(path.dirname(root), 'secret.txt')),
    '/static//' + path.join(path.dirname(root), 'secret.txt').slice(1),
    '/static/./hello.txt',
    '/static/sub/./../hello.txt'
  ]
  for (const target of targets) {
    const res = await rawGet(port, target)
    t.equal(res.status, 404, `${target}: 404`)
    t.match(res.head, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i, `${target}: a JSON error`)
    t.equal(JSON.parse(res.body).statusCode, 404, `${target}: the error body`)
    t.notMatch(res.body, SECRET, `${target}: never the secret`)
    t.notMatch(res.body, /^hello\n$/, `${target}: nor a file by another name`)
  }
  // Escapes that are not UTF-8 are refused by Fastify's router before any route: a 400.
  for (const target of ['/static/%c0%ae%c0%ae/secret.txt', '/static/%e0%a4%a', '/static/%ff']) {
    const res = await rawGet(port, target)
    t.equal(res.status, 400, `${target}: 400`)
    t.equal(JSON.parse(res.body).statusCode, 400, `${target}: a JSON error`)
    t.notMatch(res.body, SECRET, `${target}: never the secret`)
  }
  t.equal((await rawGet(port, '/static/hello.txt')).body, 'hello\n', 'the raw client does reach files')
})

t.test('a symlink whose target leaves the area is no file of it, unless STATIC_FOLLOW_SYMLINKS', async (t) => {
  const root = await staticArea(t)
  const outer = path.dirname(path.dirname(root))
  await fs.symlink(path.join(outer, 'secret.txt'), path.join(root, 'pw'))
  await fs.symlink(outer, path.join(root, 'out'))
  await fs.symlink('../../secret.txt', path.join(root, 'relative'))
  await fs.symlink(path.join(root, 'hello.txt'), path.join(root, 'alias.txt'))
  await fs.symlink(path.join(root, 'sub'), path.join(root, 'sub-alias'))
  await fs.symlink(path.join(root, 'nowhere.txt'), path.join(root, 'dangling'))

  const app = await build(t, { STATIC_DIR: root, DOCS_CATCH_ALL: 'true' })
  for (const url of ['/static/pw', '/static/out/secret.txt', '/static/relative', '/static/dangling']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url })
      t.equal(res.statusCode, 404, `${method} ${url}: 404, also with the catch-all on`)
      t.notMatch(res.body, SECRET, `${method} ${url}: never the target`)
    }
    assertError(t, await app.inject({ url }), 404)
  }
  t.equal((await app.inject({ url: '/static/alias.txt' })).body, 'hello\n', 'a symlink within the area is followed')
  t.equal((await app.inject({ url: '/static/sub-alias/deep.txt' })).body, 'deep', 'a directory symlink within the area too')

  const open = await build(t, { STATIC_DIR: root, STATIC_FOLLOW_SYMLINKS: 'true' })
  t.equal((await open.inject({ url: '/static/pw' })).body, SECRET, 'STATIC_FOLLOW_SYMLINKS=true: followed wherever it goes')
  t.equal((await open.inject({ url: '/static/out/secret.txt' })).body, SECRET)
})

t.test('STATIC_DIR may itself be a symlink: its own files are served', async (t) => {
  const root = await staticArea(t)
  const link = path.join(path.dirname(root), 'public-link')
  await fs.symlink(root, link)
  const app = await build(t, { STATIC_DIR: link })
  t.equal((await app.inject({ url: '/static/hello.txt' })).body, 'hello\n')
  t.equal((await app.inject({ url: '/static/sub/deep.txt' })).body, 'deep')
})

t.test('another method: 405 with Allow: GET, HEAD (catch-all off)', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const method of ['POST', 'PUT', 'DELETE'] as const) {
    const res = await app.inject({ method, url: '/static/hello.txt' })
    assertError(t, res, 405, method)
    t.equal(res.headers.allow, 'GET, HEAD')
  }
})
