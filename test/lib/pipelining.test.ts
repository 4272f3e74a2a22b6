import { once } from 'node:events'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { PIPELINE_DEPTH, boundPipelining } from '../../lib/pipelining.js'
import { build, buildPlugins, logSink, until } from '../helpers/index.js'

// The bound on pipelined requests (lib/pipelining.ts, registered by plugins/connections.ts), on a
// listening app: what a connection that pipelines gets, answered or not.

/** Requests that reached a route, and the gate they wait at. */
let arrived = 0
let open = () => {}
let gate = Promise.resolve()

function routes (server: FastifyInstance) {
  server.get('/held', async () => {
    arrived++
    await gate
    return 'ok'
  })
  // An answer that has begun (its headers written) before it ends.
  server.get('/begun', async (request, reply) => {
    arrived++
    return reply.send(Readable.from((async function * () {
      yield 'begun '
      await gate
      yield 'ended'
    })()))
  })
}

async function listen (t: Test) {
  const logs = logSink()
  const app = await buildPlugins(t, routes, {}, { logger: logs.logger })
  await app.listen({ host: '127.0.0.1', port: 0 })
  arrived = 0
  gate = new Promise((resolve) => { open = resolve })
  return { app, logs, port: (app.server.address() as AddressInfo).port }
}

/** Waits for `closed`, or fails after `ms`: a connection that is never closed must not hang the run. */
async function within (closed: Promise<unknown>, ms = 20_000) {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error('the connection was not closed in time')), ms) })
  try {
    await Promise.race([closed, late])
  } finally {
    clearTimeout(timer)
  }
}

/** A connection that sends `count` pipelined requests at once and reads everything until the server closes it. */
async function pipeline (port: number, count: number, path = '/held') {
  const socket = net.connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(count))
  const closed = once(socket, 'close')
  return { socket, closed, text: () => Buffer.concat(chunks).toString('latin1') }
}

t.test(`a connection has ${PIPELINE_DEPTH} requests in flight at most; past them it closes after their answers`, async (t) => {
  const { port, logs } = await listen(t)
  const client = await pipeline(port, 200)
  await until(() => arrived >= PIPELINE_DEPTH)
  // Every request sent was read at once: none more reaches the app while the first are held.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  t.equal(arrived, PIPELINE_DEPTH, `${PIPELINE_DEPTH} of 200 handed to the app`)
  open()
  await within(client.closed)
  const answers = client.text().split('HTTP/1.1 200 OK').length - 1
  t.equal(answers, PIPELINE_DEPTH, 'their answers, then the connection closed')
  t.equal(arrived, PIPELINE_DEPTH, 'and none after them')
  const last = client.text().slice(client.text().lastIndexOf('HTTP/1.1 200 OK'))
  t.match(last, /\r\nconnection: close\r\n/i, 'the last says it closes')
  t.equal(client.text().split(/\r\nconnection: close\r\n/i).length - 1, 1, 'and only the last')
  await until(() => logs.entries.some((entry) => entry.msg === 'pipelined requests past the depth: the connection closes after the answers in flight'))
  t.match(logs.entries.find((entry) => entry.msg?.toString().startsWith('pipelined')), { level: 40, depth: PIPELINE_DEPTH, cut: 1 })
})

t.test('a last answer already begun: no Connection: close in it, but the connection closes after it all the same', async (t) => {
  const { port } = await listen(t)
  const socket = net.connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(PIPELINE_DEPTH - 1) + 'GET /begun HTTP/1.1\r\nHost: x\r\n\r\n')
  await until(() => arrived >= PIPELINE_DEPTH)
  socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3))
  await new Promise((resolve) => setTimeout(resolve, 50))
  open()
  await within(once(socket, 'close'))
  t.equal(text.split('HTTP/1.1 200 OK').length - 1, PIPELINE_DEPTH, 'the depth answered')
  t.match(text, /begun \r\n5\r\nended\r\n0\r\n\r\n$/, 'the last one whole')
  t.notMatch(text, /connection: close/i, 'its headers were written before the cut')
  t.equal(arrived, PIPELINE_DEPTH)
})

t.test('requests one after another, each answered before the next, are never cut', async (t) => {
  const { port } = await listen(t)
  open()
  const socket = net.connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  for (let i = 1; i <= 3 * PIPELINE_DEPTH; i++) {
    socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n')
    await until(() => text.split('HTTP/1.1 200 OK').length - 1 === i)
  }
  t.notOk(socket.destroyed, `${3 * PIPELINE_DEPTH} requests, the connection kept`)
  socket.destroy()
})

t.test('GET /openapi.json pipelined 2,000 times by a client that reads late: the depth answered, then the connection closed', async (t) => {
  const app = await build(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1')
  socket.pause()
  socket.write('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(2000))
  await new Promise((resolve) => setTimeout(resolve, 200))
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1') })
  socket.resume()
  await within(once(socket, 'close'))
  t.equal(text.split('HTTP/1.1 200 OK').length - 1, PIPELINE_DEPTH)
})

t.test('a cut connection whose client takes nothing of its answers is destroyed after CUT_IDLE_MS, freeing what node:http holds for it', async (t) => {
  const server = http.createServer((_request, response) => { response.end('x'.repeat(1 << 20)) })
  const cuts: number[] = []
  boundPipelining(server, 2, (cut) => cuts.push(cut), 200)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const accepted = once(server, 'connection') as Promise<[net.Socket]>
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  socket.pause()
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100))
  const [connection] = await accepted
  await within(once(connection, 'close'))
  t.pass('destroyed while its client read nothing (which, not reading, has not seen it)')
  t.same(cuts, [1])
})
