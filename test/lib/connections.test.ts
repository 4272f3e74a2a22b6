import { once } from 'node:events'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import {
  DEFAULT_CONNECTION_LIMIT, DROP_LOG_INTERVAL_MS, METRICS_CONNECTION_LIMIT, RESERVED_DESCRIPTORS, SERVICE_DESCRIPTORS,
  boundedServer, capConnections, connectionLimit, openFileLimit, processOpenFileLimit, type ListenerBounds
} from '../../lib/connections.js'
import { advanceClock, until } from '../helpers/index.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            4096                 524288               files
Max locked memory         8388608              8388608              bytes
`

t.test('openFileLimit: the soft limit of /proc/self/limits', async (t) => {
  t.equal(openFileLimit(LIMITS), 4096)
  t.equal(openFileLimit(LIMITS.replace('4096 ', 'unlimited ')), undefined, 'unlimited: no limit to keep under')
  t.equal(openFileLimit('Max cpu time  unlimited  unlimited  seconds\n'), undefined, 'no such line')
  if (process.platform === 'linux') t.type(processOpenFileLimit(), 'number', 'this process\'s, on Linux')
})

t.test('connectionLimit: MAX_CONNECTIONS, else the descriptor limit less a reserve', async (t) => {
  t.equal(connectionLimit(500, 4096), 500, 'set: as set')
  t.equal(connectionLimit(0, 4096), 4096 - RESERVED_DESCRIPTORS)
  t.equal(connectionLimit(0, 100), 16, 'a tiny limit still takes a few')
  t.equal(connectionLimit(0, undefined), DEFAULT_CONNECTION_LIMIT, 'no limit known')
})

t.test('the API\'s connections, the metrics listener\'s and the service\'s own descriptors fit in the descriptor limit', async (t) => {
  for (const limit of [RESERVED_DESCRIPTORS + 16, 512, 1024, 4096, 65_536, 1_048_576]) {
    t.ok(connectionLimit(0, limit) + METRICS_CONNECTION_LIMIT + SERVICE_DESCRIPTORS <= limit, `ulimit -n ${limit}`)
  }
})

t.test('capConnections: past the cap a connection is closed at once; refusals are logged at most once an interval, counted', async (t) => {
  const server = net.createServer(() => {})
  const logged: number[] = []
  capConnections(server, 2, (dropped) => { logged.push(dropped) })
  let drops = 0
  server.on('drop', () => { drops++ })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const { port } = server.address() as AddressInfo
  const sockets: net.Socket[] = []
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  /** A connection, kept open by the client. */
  const connect = () => {
    const socket = net.connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.resume()
    sockets.push(socket)
  }
  const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, count) => err === null ? resolve(count) : reject(err)))
  for (let i = 0; i < 2; i++) connect()
  await until(async () => await connections() === 2, 30_000)
  t.same(logged, [], 'within the cap: nothing refused')

  for (let i = 0; i < 3; i++) connect()
  await until(() => drops === 3, 30_000)
  await until(() => sockets.slice(2).every((socket) => socket.closed), 30_000)
  t.ok(sockets.slice(0, 2).every((socket) => !socket.closed), 'the connections it has stay open')
  t.same(logged, [1], 'the first refusal is logged at once, the next ones of the interval are counted')

  advanceClock(t, DROP_LOG_INTERVAL_MS)
  connect()
  await until(() => drops === 4, 30_000)
  t.same(logged, [1, 3], 'the first refusal after the interval logs those since the last line')
})

/** A boundedServer answering `ok`, but for /stalled: more than the socket's buffers hold, for a client that reads nothing. */
async function listen (t: Test, bounds: ListenerBounds) {
  /** The answers the server gave up on: their connection closed before they were sent, `ms` after they began. */
  const cut: number[] = []
  const dropped: number[] = []
  const server = boundedServer(bounds, (req, res) => {
    if (req.url !== '/stalled') return res.end('ok')
    const started = Date.now()
    res.on('close', () => { if (!res.writableFinished) cut.push(Date.now() - started) })
    const chunk = Buffer.alloc(1 << 16)
    while (res.write(chunk));
  }, (count) => { dropped.push(count) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const { port } = server.address() as AddressInfo
  /** A connection that sends `request`, read (or not: no more than its socket buffers take); when it closed, and what it received. */
  const connect = (request: string, read = true) => {
    const opened = Date.now()
    const socket = net.connect(port, '127.0.0.1', () => { socket.write(request) })
    let received = ''
    socket.on('error', () => {})
    if (read) socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    t.teardown(() => { socket.destroy() })
    return new Promise<{ ms: number, received: string }>((resolve) => socket.on('close', () => resolve({ ms: Date.now() - opened, received })))
  }
  const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, count) => err === null ? resolve(count) : reject(err)))
  return { connect, connections, cut, dropped }
}

const GET = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'

t.test('boundedServer: past maxConnections a connection is closed unanswered, and the refusal told', async (t) => {
  const { connect, connections, dropped } = await listen(t, { maxConnections: 2, headersTimeout: 60_000, requestTimeout: 60_000, keepAliveTimeout: 60_000, idleTimeout: 60_000 })
  connect('')
  connect(GET)
  await until(async () => await connections() === 2, 30_000)
  t.equal((await connect(GET)).received, '', 'the third is closed unanswered')
  t.same(dropped, [1], 'the refusal told')
})

/**
 * How much later than its timeout a connection may be cut on a busy machine. Node's default check
 * (every 30 s) cut the first ones 30 s after the listen, and its default timeouts are longer still.
 */
const LATE_MS = 10_000

/** A connection kept alive after its answer by a node:http server of Node's defaults, which cuts it 6 s after the answer. */
async function keptAliveByDefault (t: Test): Promise<net.Socket> {
  const server = http.createServer((_req, res) => { res.end('ok') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1', () => { socket.write(GET) })
  socket.on('error', () => {})
  t.teardown(() => { socket.destroy() })
  // Its keep-alive starts with its answer: before that of any connection opened after this returns.
  await once(socket, 'data')
  socket.resume()
  return socket
}

t.test('boundedServer: a silent connection, a half-sent request, a body that never ends, an idle keep-alive and an answer the client does not read are each cut past their own timeout', async (t) => {
  // Short timeouts, as the test waits them out; each cut is its own: the request's timeout more than
  // a check interval past the headers', the idle one as far past the request's. The keep-alive
  // timeout is below Node's default (5 s, which Node 24 keeps a second longer): its connection is
  // cut while one kept alive by that default is still open.
  const bounds = { maxConnections: 10, headersTimeout: 200, requestTimeout: 800, keepAliveTimeout: 300, idleTimeout: 1600 }
  const { connect, connections, cut } = await listen(t, bounds)
  const byDefault = await keptAliveByDefault(t)
  const keptAlive = connect(GET)
  const byDefaultOpenAtTheCut = keptAlive.then(() => !byDefault.closed)
  const closing = [
    ['silent', connect(''), bounds.headersTimeout, /^HTTP\/1\.1 408 /],
    ['half-sent headers', connect('GET / HTTP/1.1\r\nHost: x'), bounds.headersTimeout, /^HTTP\/1\.1 408 /],
    ['a body that never ends, after its answer', connect('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345'), bounds.requestTimeout, /^HTTP\/1\.1 200 OK\r\n/],
    ['kept alive after its answer', keptAlive, bounds.keepAliveTimeout, /^HTTP\/1\.1 200 OK\r\n/]
  ] as const
  connect('GET /stalled HTTP/1.1\r\nHost: x\r\n\r\n', false)
  for (const [name, closed, timeout, answer] of closing) {
    const { ms, received } = await closed
    t.ok(ms >= timeout && ms < timeout + LATE_MS, `${name}: closed by the server past ${timeout} ms (${ms} ms)`)
    t.match(received, answer, `${name}: answered`)
  }
  t.ok(await byDefaultOpenAtTheCut, 'kept alive after its answer: cut by its own timeout, not by Node\'s default')
  await until(() => cut.length === 1, 30_000)
  t.ok(cut[0]! >= bounds.idleTimeout, `an answer the client does not read: cut past the idle timeout (${cut[0]} ms)`)
  await until(async () => await connections() === 0, 30_000)
})
