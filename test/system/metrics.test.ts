import fs from 'node:fs'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import path from 'node:path'
import t from 'tap'
import { METRICS_CONNECTION_LIMIT, RESERVED_DESCRIPTORS } from '../../lib/connections.js'
import { startServer, until } from '../helpers/index.js'

// The metrics listener (plugins/edge/metrics.ts) of the production entry (dist/bundle/server.js)
// flooded under a descriptor limit: a process of its own, whose ulimit and open descriptors
// (/proc/<pid>/fd) are its alone, and which waits out the listener's real timeouts. The listener
// in-process: test/plugins/edge/metrics.test.ts.

/** The POSIX shell's ulimit, then Node: a descriptor limit of 1024 (soft and hard) for the service. */
const LIMITED = ['/bin/sh', '-c', 'ulimit -n 1024 && exec "$@"', 'sh']

t.test('1,100 idle connections to the metrics port of the production entry, under 1,024 descriptors: the API answers throughout, the metrics port keeps a handful and closes them past its timeout', async (t) => {
  const server = await startServer(t, { NODE_ENV: 'production', STORE: 'memory' }, { prefix: LIMITED })
  const metricsPort = ((await server.waitForLog((entry) => entry.msg === 'metrics listening')).address as AddressInfo).port
  const fdDirectory = `/proc/${server.child.pid}/fd`
  const descriptors = () => fs.readdirSync(fdDirectory)
  /** The server's sockets: its two listeners and the connections it has. */
  const sockets = () => descriptors().filter((fd) => {
    try {
      return fs.readlinkSync(path.join(fdDirectory, fd)).startsWith('socket:')
    } catch {
      return false // closed meanwhile
    }
  }).length
  const listeners = sockets()
  /** A GET on a new connection (none kept from before the flood): its status, or the error's code. */
  const get = (url: string) => new Promise<number | string>((resolve) => {
    http.get(`${server.url}${url}`, { agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
    }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
  const api = async () => [await get('/health'), await get('/ready'), await get('/users')]
  t.same(await api(), [200, 200, 200], 'the API answers before')
  await until(() => sockets() === listeners, 60_000)

  const flood: net.Socket[] = []
  t.teardown(() => { for (const socket of flood) socket.destroy() })
  for (let i = 0; i < 1100; i++) {
    const socket = net.connect(metricsPort, '127.0.0.1')
    socket.on('error', () => {})
    // Read, so that the server's close is seen; nothing is ever sent.
    socket.resume()
    flood.push(socket)
  }
  const closed = () => flood.filter((socket) => socket.closed).length
  // Every connection of the flood taken in: closed by the server, or held by it.
  await until(() => closed() + sockets() - listeners >= flood.length, 60_000)
  const held = sockets() - listeners
  const during = descriptors().length
  t.ok(held <= METRICS_CONNECTION_LIMIT, `the metrics port holds ${held} connections, ${METRICS_CONNECTION_LIMIT} at most; the others are closed`)
  t.ok(during <= RESERVED_DESCRIPTORS, `${during} descriptors open during the flood: within the ${RESERVED_DESCRIPTORS} the API's cap leaves`)
  t.same(await api(), [200, 200, 200], 'the API answers during the flood: /health, /ready, /users')
  const isRefusal = (entry: Record<string, unknown>) => entry.msg === 'metrics connection refused: the metrics listener has as many as it may keep'
  await until(() => server.logs.some(isRefusal), 60_000)
  t.match(server.logs.find(isRefusal), { level: 40, limit: METRICS_CONNECTION_LIMIT }, 'the refusals are logged')

  await until(() => closed() === flood.length, 60_000)
  await until(() => sockets() === listeners, 60_000)
  t.pass('the connections it held are closed by the server, past its timeouts')
  t.same(await api(), [200, 200, 200], 'the API answers after')
  t.equal(server.child.exitCode, null, 'the process lives')
})
