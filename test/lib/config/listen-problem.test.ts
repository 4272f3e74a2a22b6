import net from 'node:net'
import t from 'tap'
import { listenProblem, type Listener } from '../../../lib/config/listen-problem.js'

/** The error a listen on `port` at `host` fails with, as Node raises it. */
function listenError (port: number, host: string): Promise<Error> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', resolve)
    server.listen(port, host, () => server.close(() => reject(new Error(`${host}:${port} could be listened on`))))
  })
}

const api = (host: string, port: number): Listener => ({ host, port, hostSetting: 'HOST', portSetting: 'PORT' })

t.test('listenProblem: a port in use names the port\'s setting, its value and the address', async (t) => {
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => taken.close())
  const { port } = taken.address() as net.AddressInfo
  const err = await listenError(port, '127.0.0.1')
  t.equal(listenProblem(err, api('127.0.0.1', port)),
    `env/PORT: ${port} is in use by another process on 127.0.0.1: stop it or choose another port`)
  t.equal(listenProblem(err, { host: '127.0.0.1', port, hostSetting: 'HOST', portSetting: 'METRICS_PORT' }),
    `env/METRICS_PORT: ${port} is in use by another process on 127.0.0.1: stop it or choose another port`, 'the metrics listener\'s')
  t.equal(listenProblem(err, api('127.0.0.1', port + 1)), undefined, 'not the port of this listener: not its problem')
})

t.test('listenProblem: a host that does not resolve, or that is no address of this machine, names the host\'s setting', async (t) => {
  const unresolved = await listenError(0, 'nowhere.invalid')
  t.match(listenProblem(unresolved, api('nowhere.invalid', 0)),
    /^env\/HOST: nowhere\.invalid does not resolve to an address \(getaddrinfo (ENOTFOUND|EAI_AGAIN)\): give an address of this machine/)
  t.match(listenProblem(unresolved, { host: 'nowhere.invalid', port: 9091, hostSetting: 'METRICS_HOST', portSetting: 'METRICS_PORT' }),
    /^env\/METRICS_HOST: nowhere\.invalid does not resolve/)
  t.equal(listenProblem(unresolved, api('localhost', 0)), undefined, 'another host\'s lookup: not this listener\'s problem')
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): documentation only, no machine's address.
  const elsewhere = await listenError(0, '192.0.2.1')
  t.equal(listenProblem(elsewhere, api('192.0.2.1', 0)),
    'env/HOST: 192.0.2.1 is no address of this machine (listen EADDRNOTAVAIL): give one of its addresses, or 0.0.0.0 for all of them')
})

t.test('listenProblem: a port this process may not take names the port\'s setting', async (t) => {
  // Ports below net.ipv4.ip_unprivileged_port_start need a privilege, which a test cannot count on
  // lacking (root has it, and a machine may open every port to all): the error as Node 24 raises
  // it for the user nobody on port 1, its fields as JSON.stringify gave them.
  const refused = Object.assign(new Error('listen EACCES: permission denied 127.0.0.1:1'),
    { code: 'EACCES', errno: -13, syscall: 'listen', address: '127.0.0.1', port: 1 })
  t.equal(listenProblem(refused, api('127.0.0.1', 1)), 'env/PORT: 1 cannot be listened on at 127.0.0.1 (listen EACCES: permission denied 127.0.0.1:1)')
  t.equal(listenProblem(refused, { host: '127.0.0.1', port: 1, hostSetting: 'HOST', portSetting: 'METRICS_PORT' }), 'env/METRICS_PORT: 1 cannot be listened on at 127.0.0.1 (listen EACCES: permission denied 127.0.0.1:1)')
  t.equal(listenProblem(refused, api('127.0.0.1', 2)), undefined, 'another port\'s error is not this listener\'s')
})

t.test('listenProblem: what is not about listening is left alone', async (t) => {
  t.equal(listenProblem(new Error('The database at postgres://db/app is unreachable'), api('127.0.0.1', 3000)), undefined)
  t.equal(listenProblem(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { syscall: 'connect', code: 'ECONNREFUSED', port: 3000 }), api('127.0.0.1', 3000)), undefined)
})
