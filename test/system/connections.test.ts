import http from 'node:http'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startServer, until } from '../helpers/index.js'

/** The POSIX shell's ulimit, then Node: a descriptor limit of 512 (soft and hard) for the service. */
const LIMITED = ['/bin/sh', '-c', 'ulimit -n 512 && exec "$@"', 'sh']

t.test('idle connections past the descriptor limit: refused at the cap, the process lives and answers', async (t) => {
  // 512 descriptors: a cap of 256 client connections (lib/connections.ts). Without a cap, the 600
  // half-sent requests below took every descriptor, and the overload guard's next memory sample
  // (once a second) failed with EMFILE and ended the process.
  const server = await startServer(t, { NODE_ENV: 'production', STORE: 'memory' }, { prefix: LIMITED })
  const { port } = new URL(server.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const health = () => new Promise<number>((resolve, reject) => {
    http.get(`${server.url}/health`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode!)) }).on('error', reject)
  })
  t.equal(await health(), 200, 'a keep-alive connection, opened first')

  const sockets: net.Socket[] = []
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  for (let i = 0; i < 600; i++) {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET /hello HTTP/1.1\r\nHost: x\r\n'))
    socket.on('error', () => {})
    sockets.push(socket)
  }
  const refused = await server.waitForLog((entry) => entry.msg === 'connection refused: the server has as many as it may keep')
  t.match(refused, { level: 40, limit: 256 }, 'refusals are logged, with the cap')
  await until(() => sockets.filter((socket) => socket.destroyed).length >= 600 - 256, 60_000)
  t.pass('the connections past the cap were closed at once')

  // Three memory samples of the overload guard (one a second) with the cap reached.
  for (let i = 0; i < 3; i++) {
    await sleep(1000)
    t.equal(await health(), 200, `the connection it had is still answered (${i + 1})`)
  }
  t.equal(server.child.exitCode, null, 'the process lives')
  for (const socket of sockets) socket.destroy()
  await until(async () => (await fetch(`${server.url}/health`).then((res) => res.status, () => 0)) === 200, 60_000)
  t.pass('once they are gone, new connections are served again')
})
