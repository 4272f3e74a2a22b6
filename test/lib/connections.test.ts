import net, { type AddressInfo } from 'node:net'
import t from 'tap'
import {
  DEFAULT_CONNECTION_LIMIT, DROP_LOG_INTERVAL_MS, METRICS_CONNECTION_LIMIT, RESERVED_DESCRIPTORS, SERVICE_DESCRIPTORS,
  capConnections, connectionLimit, openFileLimit, processOpenFileLimit
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
