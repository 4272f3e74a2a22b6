import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import { API_HEADERS } from '../../lib/security-headers.js'
import { assertError, build, json } from '../helpers/index.js'

t.test('a URL that cannot be decoded is a 400 JSON error like any other', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  for (const url of ['/hello%E0', '/static/%c0%ae%c0%ae/package.json', '/users/%ff']) {
    const res = await app.inject({ url })
    assertError(t, res, 400, 'not a valid url component')
    t.equal(json(res).code, 'FST_ERR_BAD_URL', url)
    t.match(res.headers, API_HEADERS, `${url}: the security headers, as every answer`)
  }
})

t.test('a capture over maxParamLength is a 414 JSON error, with the headers of every answer', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ url: `/position/${'9'.repeat(9000)}/1` })
  assertError(t, res, 414, 'is longer than 8192 characters')
  t.equal(json(res).code, 'FST_ERR_MAX_PARAM_LENGTH')
  t.match(res.headers, { ...API_HEADERS, 'x-request-id': String })
})

t.test('a request that is not valid HTTP gets a JSON error, then the connection closes', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  const exchange = (request: string) => new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  const parse = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    return { status: head.split('\r\n')[0], head, body: JSON.parse(body) }
  }

  const garbage = parse(await exchange('NOT HTTP AT ALL\r\n\r\n'))
  t.equal(garbage.status, 'HTTP/1.1 400 Bad Request')
  t.match(garbage.head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/)
  for (const [name, value] of Object.entries(API_HEADERS)) t.ok(garbage.head.includes(`\r\n${name}: ${value}\r\n`), `with ${name}, as every answer`)
  t.match(garbage.body, { statusCode: 400, error: 'Bad Request', message: 'The request is not valid HTTP/1.1', code: /^HPE_/ })

  const huge = parse(await exchange(`GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
  t.equal(huge.status, 'HTTP/1.1 431 Request Header Fields Too Large')
  t.match(huge.head, /\r\nx-frame-options: DENY\r\n/, 'security headers on a 431 too')
  t.same(huge.body, { statusCode: 431, code: 'HPE_HEADER_OVERFLOW', error: 'Request Header Fields Too Large', message: 'The request headers are too large' })
})
