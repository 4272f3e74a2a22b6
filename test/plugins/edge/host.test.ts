import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { API_HEADERS } from '../../../lib/security-headers.js'
import { build, logSink } from '../../helpers/index.js'

// RFC 9112, section 3.2: an HTTP/1.1 request without Host is a 400. node:http answered it with
// a bare 400 of its own (no body, no security header), unlike every other error.

interface Answer { status: string, headers: Record<string, string>, body: string, closed: boolean }

/**
 * Sends raw bytes on a connection of its own, keeping its side open, and reads until the server
 * closes the connection; one it keeps open 2 s after the first answer is reported as not closed.
 */
function exchange (port: number, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request))
    const chunks: Buffer[] = []
    let timer: NodeJS.Timeout | undefined
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(chunks).toString('utf8')
      const [head = '', ...rest] = text.split('\r\n\r\n')
      const [status = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
      resolve({ status, headers, body: rest.join('\r\n\r\n'), closed })
    }
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      timer ??= setTimeout(() => done(false), 2000)
    })
    socket.on('error', reject)
    socket.on('close', () => done(true))
  })
}

async function listening (t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const logs = logSink()
  const app: FastifyInstance = await build(t, env, { logger: logs.logger })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port, logs: logs.entries }
}

const REFUSAL = { statusCode: 400, code: 'API_ERR_HOST_MISSING', error: 'Bad Request', message: 'An HTTP/1.1 request must have a Host header' }

t.test('an HTTP/1.1 request without Host gets the JSON 400 of every error, with its headers, and the connection closes', async (t) => {
  const { port, logs } = await listening(t, { DOCS_CATCH_ALL: 'false', CORS_ORIGINS: 'https://a.example' })
  const requests = {
    'a route': 'GET /hello HTTP/1.1\r\n\r\n',
    'no route (404 otherwise)': 'GET /nowhere HTTP/1.1\r\n\r\n',
    'a protected route, before its credentials (401 otherwise)': 'GET /users/list-all HTTP/1.1\r\n\r\n',
    'a body, before it is read': 'POST /users HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 500000000\r\n\r\n{',
    'a CORS preflight (204 otherwise)': 'OPTIONS /users HTTP/1.1\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n\r\n',
    'a request id of its own': 'GET /hello HTTP/1.1\r\nX-Request-Id: no-host-1\r\n\r\n'
  }
  for (const [label, request] of Object.entries(requests)) {
    const answer = await exchange(port, request)
    t.equal(answer.status, 'HTTP/1.1 400 Bad Request', label)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', `${label}: JSON`)
    t.same(JSON.parse(answer.body), REFUSAL, `${label}: the error body`)
    t.match(answer.headers, { ...Object.fromEntries(Object.entries(API_HEADERS).map(([name, value]) => [name.toLowerCase(), value])), 'x-request-id': String }, `${label}: the security headers and a request id`)
    t.equal(answer.headers.connection, 'close', `${label}: Connection: close`)
    t.ok(answer.closed, `${label}: the connection closed`)
  }
  t.match(logs.find((entry) => entry.reqId === 'no-host-1' && entry.msg === 'request refused'), { statusCode: 400, code: 'API_ERR_HOST_MISSING' }, 'logged as a refusal')
})

t.test('with Host, or in HTTP/1.0, nothing changes; an empty Host is a Host', async (t) => {
  const { port } = await listening(t)
  for (const request of ['GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 'GET /hello HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n', 'GET /hello HTTP/1.0\r\n\r\n']) {
    const answer = await exchange(port, request)
    t.equal(answer.status.split(' ')[1], '200', JSON.stringify(request))
    t.same(JSON.parse(answer.body), { msg: 'Hello, anonymous coward' })
  }
})

t.test('the metrics port answers it the same way', async (t) => {
  const logs = logSink()
  await build(t, {}, { logger: logs.logger })
  const { port } = logs.entries.find((entry) => entry.msg === 'metrics listening')?.address as AddressInfo
  const answer = await exchange(port, 'GET /metrics HTTP/1.1\r\n\r\n')
  t.equal(answer.status, 'HTTP/1.1 400 Bad Request')
  t.same(JSON.parse(answer.body), REFUSAL)
  t.equal(answer.headers['x-content-type-options'], 'nosniff', 'the security headers')
  t.ok(answer.closed, 'the connection closed')
  t.equal((await exchange(port, 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).status, 'HTTP/1.1 200 OK', 'with Host: the metrics')
})
