import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import t from 'tap'
import { readRawBody, type RawRequest } from '../../routes/b/raw-body.js'
import { assertError, build } from '../helpers/index.js'
import { assertBodyRefused, sendEndlessBodies } from '../helpers/endless-body.js'

const JSON_TYPE = { 'content-type': 'application/json' }

t.test('GET /b without a body: the JSON string "hi"', async (t) => {
  const app = await build(t)
  const requests = [
    {},
    { headers: { 'content-length': '0' } },
    { headers: { ...JSON_TYPE, 'content-length': '0' } },
    { headers: JSON_TYPE, payload: '' }
  ]
  for (const options of requests) {
    const res = await app.inject({ url: '/b', ...options })
    t.equal(res.statusCode, 200, JSON.stringify(options))
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, '"hi"', 'a JSON string')
  }
  const head = await app.inject({ method: 'HEAD', url: '/b' })
  t.equal(head.statusCode, 200, 'HEAD')
  t.equal(head.body, '', 'HEAD: no body')
})

t.test('GET /b with a JSON number body: true', async (t) => {
  const app = await build(t)
  for (const payload of ['42', '-1.5e3', '0', ' 7\n', '1e400']) {
    const res = await app.inject({ url: '/b', headers: JSON_TYPE, payload })
    t.equal(res.statusCode, 200, payload)
    t.equal(res.body, 'true', payload)
  }
  const typed = await app.inject({ url: '/b', headers: { 'content-type': 'Application/JSON; charset=utf-8' }, payload: '1' })
  t.equal(typed.body, 'true', 'media type compared without case or parameters')
})

t.test('GET /b with other JSON, or invalid JSON: 400', async (t) => {
  const app = await build(t)
  const cases: Array<[string, string]> = [
    ['"42"', 'not a string'],
    ['{}', 'not an object'],
    ['null', 'not null'],
    ['[1]', 'not an array'],
    ['true', 'not a boolean'],
    ['not json', 'not valid JSON'],
    ['42 43', 'not valid JSON'],
    [' ', 'not valid JSON'],
    ['{"__proto__":{"x":1}}', 'not an object']
  ]
  for (const [payload, mentions] of cases) {
    const res = await app.inject({ url: '/b', headers: JSON_TYPE, payload })
    assertError(t, res, 400, mentions)
  }
})

t.test('GET /b with a body in another type, or without a Content-Type: 415', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ url: '/b', headers: { 'content-type': 'text/plain' }, payload: '42' }), 415, 'text/plain')
  assertError(t, await app.inject({ url: '/b', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' }), 415)
  assertError(t, await app.inject({ url: '/b', payload: '42' }), 415, 'missing')
  assertError(t, await app.inject({ url: '/b', headers: { accept: 'text/html', 'content-type': 'text/plain' }, payload: '42' }), 406)
})

t.test('GET /b honours BODY_LIMIT: 413 above it, by Content-Length or by counting', async (t) => {
  const app = await build(t, { BODY_LIMIT: '8' })
  t.equal((await app.inject({ url: '/b', headers: JSON_TYPE, payload: '12345678' })).body, 'true', 'at the limit')
  assertError(t, await app.inject({ url: '/b', headers: JSON_TYPE, payload: '123456789' }), 413)
  // A stream payload is sent without Content-Length: only counting can stop it.
  const chunked = await app.inject({ url: '/b', headers: JSON_TYPE, payload: Readable.from(['12345', '67890']) })
  assertError(t, chunked, 413)
  t.equal((await app.inject({ url: '/b', headers: JSON_TYPE, payload: Readable.from(['1234', '5678']) })).body, 'true', 'streamed, at the limit')
})

/** GET /b over a real socket, the body sent in chunks (Transfer-Encoding: chunked). */
function chunkedGet (port: number, chunks: string[]): Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }> {
  return new Promise((resolve, reject) => {
    // node:http sends a GET body chunked only when told to.
    const headers = { ...JSON_TYPE, 'transfer-encoding': 'chunked' }
    const req = http.request({ host: '127.0.0.1', port, path: '/b', method: 'GET', headers }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

t.test('GET /b over a socket: chunked bodies; the server keeps answering after refusing one', async (t) => {
  // No drain at the close: node:http's agent keeps its connections open, and the drain
  // (SHUTDOWN_DRAIN, 1 s) would wait for them; the close is not what this test is about.
  const app = await build(t, { BODY_LIMIT: '16', SHUTDOWN_DRAIN: '0' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const ok = await chunkedGet(port, ['-12', '.5', 'e2'])
  t.equal(ok.status, 200)
  t.equal(ok.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(ok.body, 'true')
  const tooLarge = await chunkedGet(port, ['1'.repeat(10), '1'.repeat(10)])
  t.equal(tooLarge.status, 413)
  t.equal(JSON.parse(tooLarge.body).statusCode, 413, 'a JSON error')
  const notNumber = await chunkedGet(port, ['{"a"', ':1}'])
  t.equal(notNumber.status, 400)
  t.equal((await chunkedGet(port, [])).body, '"hi"', 'an empty chunked body is no body')
})

t.test('GET /b refusing a body over BODY_LIMIT (413) reads no more of it, and closes the connection after the whole answer', async (t) => {
  const limit = 1024
  const app = await build(t, { BODY_LIMIT: String(limit) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const headers = 'GET /b HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
  const digits = '1'.repeat(16 * 1024)
  const cases = [
    { label: 'chunked', head: `${headers}Transfer-Encoding: chunked\r\n\r\n`, chunk: Buffer.from(`4000\r\n${digits}\r\n`), end: '0\r\n\r\n' },
    { label: 'Content-Length over the limit', head: `${headers}Content-Length: ${64 * 1024 * 1024}\r\n\r\n`, chunk: Buffer.from(digits), end: '' }
  ]
  // Each client writes up to 64 MB, as fast as the server reads; side by side, their connections'
  // lingering closes (lib/lingering-close.ts) are waited out once.
  const sent = await sendEndlessBodies(cases.map(({ head, chunk, end }) => ({ app, head, chunk, end })))
  for (const [index, { label }] of cases.entries()) assertBodyRefused(t, sent[index]!, limit, label)
  t.equal((await app.inject({ url: '/b', headers: JSON_TYPE, payload: '1' })).body, 'true', 'the server answers on')
})

/** A request stand-in: the given chunks as a stream, with the given headers. */
function rawRequest (chunks: Array<string | Buffer>, headers: http.IncomingHttpHeaders = {}): RawRequest {
  return Object.assign(Readable.from(chunks, { objectMode: false }), { headers })
}

t.test('readRawBody: the bytes, whatever the chunking', async (t) => {
  t.same(await readRawBody(rawRequest([]), 10), Buffer.alloc(0), 'no body')
  t.same(await readRawBody(rawRequest(['ab', Buffer.from('cd')]), 10), Buffer.from('abcd'))
  t.same(await readRawBody(rawRequest(['é'], { 'content-length': '2' }), 2), Buffer.from('é'), 'bytes, not characters')
  const consumed = rawRequest(['abc'])
  for await (const chunk of consumed) t.ok(chunk)
  t.same(await readRawBody(consumed, 10), Buffer.alloc(0), 'a stream already read: nothing left, no hang')
})

t.test('readRawBody: the errors Fastify gives for bodies it reads itself', async (t) => {
  const statusOf = (promise: Promise<unknown>) => promise.then(() => 200, (err: { statusCode: number, code?: string }) => err.statusCode)
  const tooLarge = rawRequest(['ab', 'c', 'def'])
  t.equal(await statusOf(readRawBody(tooLarge, 2)), 413, 'over the limit while reading')
  t.equal(tooLarge.readableFlowing, false, 'and the body is read no further')
  const unread = rawRequest(['abc'], { 'content-length': '3' })
  t.equal(await statusOf(readRawBody(unread, 2)), 413, 'over the limit by Content-Length')
  t.equal(unread.readableFlowing, null, 'refused without reading')
  t.equal(await statusOf(readRawBody(rawRequest(['abc'], { 'content-length': '5' }), 10)), 400, 'fewer bytes than Content-Length')
  const failing = new Readable({ read () { this.destroy(new Error('connection reset')) } })
  t.equal(await statusOf(readRawBody(Object.assign(failing, { headers: {} }), 10)), 400, 'a failing stream')
  await t.rejects(readRawBody(rawRequest(['abc']), 2), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
})
