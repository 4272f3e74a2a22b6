import fs from 'node:fs'
import path from 'node:path'
import net, { type AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { loggerOptions, serverOptions } from '../../app.js'
import { AccessLogController, RUNNING_CHECK_MS } from '../../lib/access-log.js'
import { loadConfig } from '../../lib/config/load.js'
import { literal, plainString, raw } from '../../lib/json-bytes.js'
import { LogDestination } from '../../lib/log-destination.js'
import { RequestLine, bindRequestLogger, deferLine, lazyChildLoggerFactory, requestFields, requestJson, serverLogger, writeLine } from '../../lib/logger.js'
import { build, logSink, pipeDestination, until } from '../helpers/index.js'

// One line per request at info, when it ends (lib/access-log.ts): what operators read of a request,
// at a fraction of the cost of Fastify's two lines (bench/logging.bench.js).

const config = loadConfig({})

t.test('at info, one line per request, when it ends, with all that "incoming request" and "request completed" said', async (t) => {
  const logs = logSink('info')
  const app = await build(t, { DOCS_CATCH_ALL: 'false' }, { logger: logs.logger })
  const res = await app.inject({ url: '/hello?name=x&token=s3cret', headers: { 'x-request-id': 'one-line' }, remoteAddress: '192.0.2.7' })
  t.equal(res.statusCode, 200)
  const lines = logs.entries.filter((entry) => entry.reqId === 'one-line')
  t.same(lines.map((entry) => entry.msg), ['request completed'])
  t.match(lines[0], {
    level: 30,
    time: Number,
    pid: process.pid,
    hostname: String,
    reqId: 'one-line',
    req: { method: 'GET', url: '/hello?name=x&token=[redacted]', host: 'localhost:80', remoteAddress: '192.0.2.7' },
    res: { statusCode: 200 },
    responseTime: Number
  })
  t.notMatch(JSON.stringify(logs.entries), /s3cret/)
})

t.test('the line is written as pino writes it, without the child logger pino makes for a request', async (t) => {
  const sink = logSink('info')
  const instance = serverLogger(sink.logger)
  // The LazyLoggers' real children are made by the root pino's `child`.
  const root = Object.getPrototypeOf(instance) as { child: (...args: unknown[]) => unknown }
  const pinoChild = root.child
  let children = 0
  root.child = function (this: unknown, ...args: unknown[]) { children++; return pinoChild.apply(this, args) }
  t.teardown(() => { root.child = pinoChild })
  const server = Fastify({ ...serverOptions(config, { logger: false }), logger: undefined, loggerInstance: instance })
  t.teardown(() => server.close())
  server.get('/', async () => 'ok')
  server.get('/chatty', async (request) => { request.log.info('on the way'); return 'ok' })
  await server.ready()
  server.log.info('the server speaks first: its own logger is made')
  const before = children
  await server.inject({ url: '/', headers: { 'x-request-id': 'no-child' } })
  t.equal(children, before, 'no child made for the request')
  const line = sink.entries.find((entry) => entry.reqId === 'no-child')
  t.match(line, { msg: 'request completed', req: { method: 'GET', url: '/' }, res: { statusCode: 200 } })
  t.same(Object.keys(line!).slice(0, 5), ['level', 'time', 'pid', 'hostname', 'reqId'], 'pino\'s order of fields')

  // A request whose logger has written a line before its end: its line goes through that child, alike.
  await server.inject({ url: '/chatty', headers: { 'x-request-id': 'chatty' } })
  t.same(sink.entries.filter((entry) => entry.reqId === 'chatty').map((entry) => entry.msg), ['on the way', 'request completed'])
})

t.test('at debug, "incoming request" as well, when the request starts; at warn, nothing', async (t) => {
  for (const [level, expected] of [['debug', ['incoming request', 'request completed']], ['warn', []]] as const) {
    const logs = logSink(level)
    const app = await build(t, { DOCS_CATCH_ALL: 'false' }, { logger: logs.logger })
    await app.inject({ url: '/hello', headers: { 'x-request-id': `at-${level}` } })
    t.same(logs.entries.filter((entry) => entry.reqId === `at-${level}`).map((entry) => entry.msg), expected, level)
  }
})

t.test('a request still running is written once; one whose client goes before its answer, as aborted', async (t) => {
  t.equal(RUNNING_CHECK_MS, 1000)
  const sink = logSink('info')
  const server = Fastify({ ...serverOptions(config, { logger: sink.logger }), logController: new AccessLogController({ checkMs: 20 }) })
  let release = () => {}
  const hung = new Promise<void>((resolve) => { release = resolve })
  server.get('/hang', async () => { await hung; return 'late' })
  t.teardown(async () => { release(); await server.close() })
  await server.listen({ port: 0, host: '127.0.0.1' })
  const socket = net.connect((server.server.address() as AddressInfo).port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET /hang?token=s3cret HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: hung\r\n\r\n')
  const lines = () => sink.entries.filter((entry) => entry.reqId === 'hung')
  await until(() => lines().length > 0)
  // Several checks later, still one line.
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(lines(), [{ msg: 'request running', req: { method: 'GET', url: '/hang?token=[redacted]' }, elapsed: Number }])
  t.equal(lines().length, 1, 'written once')

  socket.destroy()
  await until(() => lines().length > 1)
  t.match(lines()[1], { msg: 'request aborted: the connection closed before the answer was sent', req: { url: '/hang?token=[redacted]' }, responseTime: Number })
  release()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(lines().length, 2, 'nothing more once the handler ends')
})

t.test('a line written after its connection closed still names the client: Connection: close, HTTP/1.0, a client gone', async (t) => {
  // The service's destination, which writes a request's line at the end of the turn, when the
  // connection may have closed.
  const { destination, received } = pipeDestination(t)
  const instance = serverLogger({ ...loggerOptions(config), level: 'info', stream: destination })
  // No `request running` line before the client goes (it would read the address while the
  // connection is open): the check comes long after.
  const server = Fastify({ ...serverOptions(config, { logger: false }), logger: undefined, loggerInstance: instance, logController: new AccessLogController({ checkMs: 250 }) })
  let started = false
  const hung = new Promise<void>(() => {})
  server.get('/', async () => 'ok')
  server.get('/hang', async () => { started = true; await hung })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const port = (server.server.address() as AddressInfo).port
  const line = (id: string) => {
    destination.writeNow()
    const found = received().split('\n').find((text) => text.includes(`"reqId":"${id}"`))
    return found === undefined ? undefined : JSON.parse(found) as { req: { remotePort?: number } }
  }
  const client = { remoteAddress: '127.0.0.1', remotePort: Number }

  for (const [id, request] of [
    ['closing', 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Request-Id: closing\r\n\r\n'],
    ['http-1.0', 'GET / HTTP/1.0\r\nX-Request-Id: http-1.0\r\n\r\n']
  ] as const) {
    const socket = net.connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.resume()
    socket.write(request)
    await new Promise((resolve) => socket.once('connect', resolve))
    const localPort = socket.localPort
    // The service closes the connection once it has answered; the line is written after.
    await new Promise((resolve) => socket.once('close', resolve))
    await until(() => line(id) !== undefined)
    t.match(line(id), { msg: 'request completed', res: { statusCode: 200 }, req: client }, id)
    t.equal(line(id)!.req.remotePort, localPort, `${id}: the client's own port`)
  }

  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET /hang HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: gone\r\n\r\n')
  await until(() => started)
  const localPort = socket.localPort
  t.type(localPort, 'number')
  socket.destroy()
  await until(() => line('gone') !== undefined)
  t.match(line('gone'), { msg: 'request aborted: the connection closed before the answer was sent', req: client })
  t.equal(line('gone')!.req.remotePort, localPort, 'gone: the client\'s own port')
})

t.test('the requests of one connection each name their own host and client: a proxy\'s clients, another Host', async (t) => {
  const { destination, received } = pipeDestination(t)
  const instance = serverLogger({ ...loggerOptions(config), level: 'info', stream: destination })
  const server = Fastify({ ...serverOptions(loadConfig({ TRUST_PROXY: '127.0.0.1' }), { logger: false }), logger: undefined, loggerInstance: instance })
  server.get('/', async () => 'ok')
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const socket = net.connect((server.server.address() as AddressInfo).port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.resume()
  const sent = [
    { id: 'first', host: 'localhost', forwardedFor: undefined, remoteAddress: '127.0.0.1' },
    { id: 'again', host: 'localhost', forwardedFor: undefined, remoteAddress: '127.0.0.1' },
    { id: 'client-a', host: 'localhost', forwardedFor: '198.51.100.4', remoteAddress: '198.51.100.4' },
    { id: 'client-b', host: 'localhost', forwardedFor: '203.0.113.9', remoteAddress: '203.0.113.9' },
    { id: 'other-host', host: 'example.com', forwardedFor: undefined, remoteAddress: '127.0.0.1' },
    { id: 'last', host: 'localhost', forwardedFor: undefined, remoteAddress: '127.0.0.1' }
  ]
  const lines = () => {
    destination.writeNow()
    return received().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { reqId: string, req: object })
  }
  // One at a time, each line written before the next request is sent.
  for (const { id, host, forwardedFor } of sent) {
    socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nX-Request-Id: ${id}\r\n${forwardedFor === undefined ? '' : `X-Forwarded-For: ${forwardedFor}\r\n`}\r\n`)
    await until(() => lines().some((line) => line.reqId === id))
  }
  for (const { id, host, remoteAddress } of sent) {
    const line = lines().find((line) => line.reqId === id)
    t.same(line?.req, { method: 'GET', url: '/', host, remoteAddress, remotePort: socket.localPort }, id)
  }
})

t.test('a request refused before any route is one line naming it, and is not taken for one still running', async (t) => {
  const sink = logSink('info')
  const server = Fastify({ ...serverOptions(config, { logger: sink.logger }), logController: new AccessLogController({ checkMs: 10 }) })
  t.teardown(() => server.close())
  // Over a connection, as production gets it: inject's response is destroyed as it ends while its
  // mock socket still holds the bytes, and a check in between took it for aborted (a second line,
  // once in some hundred requests, more often on a busy machine). No real connection shows that.
  await server.listen({ port: 0, host: '127.0.0.1' })
  const socket = net.connect((server.server.address() as AddressInfo).port, '127.0.0.1')
  socket.on('error', () => {})
  t.teardown(() => socket.destroy())
  let answer = ''
  socket.on('data', (chunk) => { answer += String(chunk) })
  socket.write('GET /echo%E0?token=s3cret HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: bad-url\r\n\r\n')
  await until(() => answer.endsWith('}'))
  t.match(answer, /^HTTP\/1\.1 400 /)
  const lines = () => sink.entries.filter((entry) => entry.reqId === 'bad-url')
  // Several checks later, the connection still open; then closed by the client: still one line.
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(lines(), [{ msg: 'request refused', req: { url: '/echo%E0?token=[redacted]' }, statusCode: 400 }])
  socket.end()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(lines().length, 1)
})

t.test('`fastify start`: on the logger fastify-cli makes, the same line, through pino', async (t) => {
  const sink = logSink('info')
  // As cli.ts builds the server: fastify-cli's logger from options, ours merged in.
  const server = Fastify({ ...serverOptions(config, { logger: false }), logger: { ...loggerOptions(config), stream: sink.logger.stream }, childLoggerFactory: lazyChildLoggerFactory })
  t.teardown(() => server.close())
  server.get('/', async () => 'ok')
  await server.inject({ url: '/?password=s3cret', headers: { 'x-request-id': 'cli' } })
  t.match(sink.entries.filter((entry) => entry.reqId === 'cli'), [{ msg: 'request completed', req: { method: 'GET', url: '/?password=[redacted]' }, res: { statusCode: 200 }, responseTime: Number }])
  t.equal(sink.entries.filter((entry) => entry.reqId === 'cli').length, 1)
})

t.test('requestJson writes what requestFields gives, serialised', async (t) => {
  const requests = [
    { method: 'GET', url: '/a?token=s3cret&q="quoted"\\', host: 'h\u00e9:80', ip: '::1', socket: { remotePort: 5 } },
    { method: 'POST', url: `/${'x'.repeat(2000)}`, host: '', ip: undefined, socket: undefined },
    { method: 'GET', url: '/', host: 'localhost', ip: '127.0.0.1', socket: { remotePort: undefined } }
  ] as unknown as FastifyRequest[]
  for (const request of requests) {
    t.same(JSON.parse(`{${requestJson(request)}}`), JSON.parse(JSON.stringify({ req: requestFields(request) })), request.url.slice(0, 20))
  }
})

t.test('a logger of another format (formatters of its own) gets the line through pino; below the level, nothing', async (t) => {
  const sink = logSink('info')
  const instance = serverLogger({ ...sink.logger, formatters: { level: (label: string) => ({ level: label }) } })
  const server = Fastify({ ...serverOptions(config, { logger: false }), logger: undefined, loggerInstance: instance })
  t.teardown(() => server.close())
  server.get('/', async () => 'ok')
  await server.inject({ url: '/', headers: { 'x-request-id': 'formatted' } })
  t.match(sink.entries.filter((entry) => entry.reqId === 'formatted'), [{ level: 'info', msg: 'request completed', req: { url: '/' }, res: { statusCode: 200 } }])

  const warn = logSink('warn')
  const log = serverLogger(warn.logger).child({ reqId: 'quiet' })
  t.ok(writeLine(log, 30, '"msg":"below the level"'), 'nothing to write: done')
  t.equal(warn.entries.length, 0)
})

t.test('a response that fails (its `error` event) is written as an error, with the request, at every level that writes errors', async (t) => {
  for (const level of ['info', 'warn', 'error']) {
    const sink = logSink(level)
    const controller = new (class extends AccessLogController {
      override isLogDisabled (request: FastifyRequest) { return request.url === '/quiet' }
    })()
    const server = Fastify({ ...serverOptions(config, { logger: sink.logger }), logController: controller })
    t.teardown(() => server.close())
    // Fastify calls requestCompleted with the error of the response's `error` event.
    const fails = async (request: FastifyRequest, reply: FastifyReply) => {
      controller.requestCompleted(new Error('socket broke'), request, reply)
      return 'ok'
    }
    server.get('/', fails)
    server.get('/quiet', fails)
    await server.inject({ url: '/', headers: { 'x-request-id': 'broken' } })
    t.match(sink.entries.filter((entry) => entry.reqId === 'broken'), [{ level: 50, msg: 'request errored', err: { message: 'socket broke' }, req: { url: '/' }, responseTime: Number }], level)
    t.equal(sink.entries.filter((entry) => entry.reqId === 'broken').length, 1, `${level}: once`)
    await server.inject({ url: '/quiet', headers: { 'x-request-id': 'quiet' } })
    t.same(sink.entries.filter((entry) => entry.reqId === 'quiet'), [], `${level}: not for a request whose logs are off`)
  }
})

t.test('on the service\'s destination the line is written into its buffer, byte for byte what the string path writes', async (t) => {
  const { destination, received } = pipeDestination(t)
  const bytes = serverLogger({ ...loggerOptions(config), level: 'info', stream: destination })
  const written: string[] = []
  const strings = serverLogger({ ...loggerOptions(config), level: 'info', stream: new Writable({ write (chunk, _encoding, callback) { written.push(String(chunk)); callback() } }) })
  // Both sides write the same millisecond.
  const now = Date.now
  Date.now = () => 1795873624370
  t.teardown(() => { Date.now = now })
  const writes = [
    { method: 'GET', url: '/hello?name=x', host: 'localhost:3000', ip: '127.0.0.1', remotePort: 49800, statusCode: 200, elapsed: 0.41212499141693115 },
    { method: 'POST', url: '/users?token=s3cret&q=1', host: '[::1]:3000', ip: '::1', remotePort: 1, statusCode: 204, elapsed: 12.5 },
    { method: 'GET', url: '/a?q="quoted"\\', host: 'h\u00e9:80', ip: undefined, remotePort: undefined, statusCode: 404, elapsed: 3 },
    { method: 'GET', url: `/${'x'.repeat(2000)}`, host: '', ip: '192.0.2.7', remotePort: 65535, statusCode: 414, elapsed: 0 },
    { method: 'PROPFIND', url: '/', host: 'localhost', ip: '127.0.0.1', remotePort: 2, statusCode: 999, elapsed: 1 },
    // More requests on the first one's connection: its host, address and port as its first line
    // wrote them, then another host, another address (a proxy's client), none.
    { connection: 0, method: 'GET', url: '/hello?name=y', host: 'localhost:3000', ip: '127.0.0.1', remotePort: 49800, statusCode: 200, elapsed: 1.5 },
    { connection: 0, method: 'GET', url: '/hello', host: 'example.com', ip: '127.0.0.1', remotePort: 49800, statusCode: 200, elapsed: 1 },
    { connection: 0, method: 'GET', url: '/hello', host: 'localhost:3000', ip: '198.51.100.4', remotePort: 49800, statusCode: 200, elapsed: 1 },
    { connection: 0, method: 'GET', url: '/hello', host: 'localhost:3000', ip: undefined, remotePort: 49800, statusCode: 200, elapsed: 1 },
    { connection: 0, method: 'GET', url: '/hello?again', host: 'localhost:3000', ip: '127.0.0.1', remotePort: 49800, statusCode: 200, elapsed: 2 }
  ]
  const sockets = new Map<number, object>()
  for (const [index, write] of writes.entries()) {
    const connection = write.connection ?? index
    const socket = sockets.get(connection) ?? { remotePort: write.remotePort }
    sockets.set(connection, socket)
    for (const root of [bytes, strings]) {
      const log = root.child({}).child({ reqId: `id-${index}` })
      if (index === 1) bindRequestLogger(log, { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' })
      const request = { id: `id-${index}`, method: write.method, url: write.url, host: write.host, ip: write.ip, socket, log } as unknown as FastifyRequest
      const reply = { request, statusCode: write.statusCode, elapsedTime: write.elapsed, raw: {} } as unknown as FastifyReply
      request.log = log
      const controller = new AccessLogController()
      controller.incomingRequest(request, reply)
      controller.requestCompleted(null, request, reply)
    }
  }
  await destination.flushed()
  const expected = written.join('')
  await until(() => received().length >= expected.length)
  const lines = received().split('\n').filter((line) => line !== '')
  t.equal(`${lines.join('\n')}\n`, expected, 'the same bytes')
  t.equal(lines.length, writes.length)
})

t.test('deferLine: nothing below the level; a binding left undefined is left out; what cannot be written as bytes is written as a string, in its place', async (t) => {
  const { destination, received } = pipeDestination(t)
  const line = new RequestLine(30, (buffer: Buffer, at: number, text: string) => plainString(buffer, raw(buffer, at, literal('"msg":')), text), (text: string) => `"msg":${JSON.stringify(text)}`)
  const quiet = serverLogger({ ...loggerOptions(config), level: 'warn', stream: destination }).child({}).child({ reqId: 'quiet' })
  t.ok(deferLine(quiet, line, 'below', undefined), 'below the level: done')
  await destination.flushed()
  t.equal(destination.waiting, 0, 'and nothing written')

  const root = serverLogger({ ...loggerOptions(config), level: 'info', stream: destination }).child({})
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ reqId: 'a', left: undefined }, 'bytes'],
    [{ 'we"ird': 'b' }, 'a name to escape'],
    [{ reqId: 'c', count: 5 }, 'a number'],
    [{ reqId: 'd"' }, 'a value to escape'],
    [{ reqId: 'e' }, 'a message to escape: "']
  ]
  for (const [bindings, text] of cases) t.ok(deferLine(root.child(bindings), line, text, undefined), text)
  const made = root.child({ reqId: 'made' })
  made.warn('first')
  t.ok(deferLine(made, line, 'through the child made', undefined))
  await destination.flushed()
  await until(() => received().split('\n').length === cases.length + 3)
  const lines = received().trimEnd().split('\n').map((each) => JSON.parse(each))
  t.same(Object.keys(lines[0]), ['level', 'time', 'pid', 'hostname', 'reqId', 'msg'], 'the undefined binding left out')
  t.same(lines.map(({ level, time, pid, hostname, ...rest }) => rest), [
    { reqId: 'a', msg: 'bytes' },
    { 'we"ird': 'b', msg: 'a name to escape' },
    { reqId: 'c', count: 5, msg: 'a number' },
    { reqId: 'd"', msg: 'a value to escape' },
    { reqId: 'e', msg: 'a message to escape: "' },
    { reqId: 'made', msg: 'first' },
    { reqId: 'made', msg: 'through the child made' }
  ], 'every line, in order')
  t.ok(lines.every((each) => each.level === (each.msg === 'first' ? 40 : 30) && each.pid === process.pid))

  // A descriptor that fails: once it has, lines deferred are dropped, as lines written are.
  const file = path.join(t.testdir(), 'read-only')
  fs.writeFileSync(file, '')
  const readOnly = fs.openSync(file, 'r')
  t.teardown(() => fs.closeSync(readOnly))
  const failed = new LogDestination(readOnly)
  const gone = serverLogger({ ...loggerOptions(config), level: 'info', stream: failed }).child({}).child({ reqId: 'f' })
  t.ok(deferLine(gone, line, 'lost', undefined))
  await failed.flushed()
  t.ok(deferLine(gone, line, 'dropped', undefined))
  await failed.flushed()
  t.equal(failed.waiting, 0)
  t.equal(fs.readFileSync(file, 'utf8'), '')
})

t.test('each line\'s start has its own level, time and root\'s bindings: the next millisecond, a time of another number of digits, another level or root', async (t) => {
  const { destination, received } = pipeDestination(t)
  const at = (level: number) => new RequestLine(level, (buffer: Buffer, at: number, text: string) => plainString(buffer, raw(buffer, at, literal('"msg":')), text), (text: string) => `"msg":${JSON.stringify(text)}`)
  const info = at(30)
  const warn = at(40)
  const root = serverLogger({ ...loggerOptions(config), level: 'info', stream: destination }).child({})
  const other = serverLogger({ ...loggerOptions(config), level: 'info', base: { pid: 7, hostname: 'other', zone: 'b' }, stream: destination }).child({})
  const now = Date.now
  t.teardown(() => { Date.now = now })
  const writes: Array<[number, RequestLine<string, undefined>, typeof root, string]> = [
    [1795873624370, info, root, 'first'],
    [1795873624371, info, root, 'the next millisecond'],
    [1795873624371, info, root, 'the same'],
    [999, info, root, 'three digits'],
    [1000, info, root, 'four digits'],
    [1001, warn, root, 'another level'],
    [1001, warn, other, 'another root'],
    [1002, warn, other, 'its next millisecond'],
    [-1, info, root, 'a time that is no integer of 0 or more'],
    [5, info, root, 'after it']
  ]
  // The clock is read when the turn's lines are written (flushed() writes them at once), not when
  // each is deferred: one deferred at another time is written at the later one.
  for (const [time, line, logger, text] of writes) {
    Date.now = () => time - 1
    t.ok(deferLine(logger.child({ reqId: text }), line, text, undefined))
    Date.now = () => time
    destination.flushed().catch(t.threw)
  }
  await destination.flushed()
  await until(() => received().split('\n').length === writes.length + 1)
  const lines = received().trimEnd().split('\n').map((each) => JSON.parse(each))
  t.same(lines.map(({ level, time, pid, hostname, zone, msg }) => ({ level, time, pid, hostname, zone, msg })), writes.map(([time, line, logger, msg]) => ({
    level: line.level,
    time,
    ...(logger === other ? { pid: 7, hostname: 'other', zone: 'b' } : { pid: process.pid, hostname: lines[0].hostname, zone: undefined }),
    msg
  })))
})

t.test('a request whose logging is disabled is neither counted as running nor written', async (t) => {
  const sink = logSink('info')
  const controller = new (class extends AccessLogController {
    override isLogDisabled () { return true }
  })()
  const server = Fastify({ ...serverOptions(config, { logger: sink.logger }), logController: controller })
  t.teardown(() => server.close())
  server.get('/', async () => 'ok')
  await server.inject({ url: '/', headers: { 'x-request-id': 'disabled' } })
  t.same(sink.entries.filter((entry) => entry.reqId === 'disabled'), [])
})
