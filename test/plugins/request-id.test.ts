import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import { build, json, logSink } from '../helpers/index.js'
import { NEW_ID } from '../helpers/request-id.js'
import type { IncomingMessage } from 'node:http'
import { newRequestId, requestId } from '../../lib/request-id.js'

// The request id (lib/request-id.ts) of the app in this process. That two processes draw different
// random parts, from fresh processes of its own: test/system/request-id.test.ts.

t.test('a sane X-Request-Id is echoed, and is the reqId of every log line of the request', async (t) => {
  const logs = logSink()
  const app = await build(t, { DOCS_CATCH_ALL: 'false' }, { logger: logs.logger })
  const id = 'proxy-7f3a9c:0001'
  const before = logs.entries.length
  const res = await app.inject({ url: '/hello?name=x', headers: { 'x-request-id': id } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-request-id'], id)

  // The lines written while the request ran (build() asked for /openapi.json before it).
  const lines = logs.entries.slice(before).filter((entry) => entry.reqId !== undefined)
  t.same(lines.map((entry) => entry.msg), ['request completed'])
  t.ok(lines.every((entry) => entry.reqId === id), 'the request\'s line carries the id')
})

t.test('errors carry the id too: 404, 405, 401, 400, 406', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const requests = [
    { url: '/no-such-path' },
    { method: 'DELETE' as const, url: '/hello' },
    { url: '/users/list-all' },
    { url: '/position/x/1' },
    { url: '/hello', headers: { accept: 'text/html' } }
  ]
  for (const [index, request] of requests.entries()) {
    const id = `err-${index}`
    const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': id } })
    t.ok(res.statusCode >= 400, `${request.url}: ${res.statusCode}`)
    t.equal(res.headers['x-request-id'], id, `${request.url}: echoed`)
  }
})

t.test('without a sane X-Request-Id, a new id for every request: the process part, then a counter', async (t) => {
  const app = await build(t)
  const insane = [
    undefined, '', 'has space', 'x'.repeat(129), 'naïve', 'tab\there', 'a, b'
  ]
  const seen = new Set<string>()
  for (const given of insane) {
    const res = await app.inject({ url: '/health', headers: given === undefined ? {} : { 'x-request-id': given } })
    const id = String(res.headers['x-request-id'])
    t.match(id, NEW_ID, `${JSON.stringify(given)}: a new id`)
    seen.add(id)
  }
  t.equal(seen.size, insane.length, 'never the same id twice')
  const longest = 'x'.repeat(128)
  t.equal((await app.inject({ url: '/health', headers: { 'x-request-id': longest } })).headers['x-request-id'], longest, '128 characters are kept')
  t.match(requestId({ headers: { 'x-request-id': ['a', 'b'] } } as unknown as IncomingMessage), NEW_ID, 'a repeated header is not an id')
  const [first, second] = [newRequestId(), newRequestId()].map((id) => NEW_ID.exec(id)!)
  t.equal(first![1], second![1], 'one process, one random part')
  t.equal(Number(second![2]), Number(first![2]) + 1, 'and a counter')
})

t.test('errors Fastify raises before routing carry the id: a bad URL, an over-long capture', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const bad = await app.inject({ url: '/hello%E0', headers: { 'x-request-id': 'bad-url' } })
  t.equal(bad.statusCode, 400)
  t.equal(json(bad).code, 'FST_ERR_BAD_URL')
  t.equal(bad.headers['x-request-id'], 'bad-url')
  const long = await app.inject({ url: `/position/${'1'.repeat(9000)}/2` })
  t.equal(long.statusCode, 414)
  t.match(long.headers['x-request-id'], NEW_ID)
})

t.test('a request that is not HTTP gets an id too, logged with the refusal', async (t) => {
  const logs = logSink()
  const app = await build(t, {}, { logger: logs.logger })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  const id = /\r\nX-Request-Id: ([^\r]+)\r\n/i.exec(answer)?.[1]
  t.match(id, NEW_ID, 'an id in the answer')
  t.match(logs.entries.find((entry) => entry.reqId === id), { msg: 'request refused', statusCode: 400, code: /^HPE_/ })
})
