import { once } from 'node:events'
import http from 'node:http'
import net, { type AddressInfo, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { closeAfterAnswer, cutAtEnd, lingeringClose } from '../../lib/lingering-close.js'
import { until } from '../helpers/index.js'

/** A server on the loopback whose connections `onConnection` gets; closed when the test ends. */
async function listen (t: Test, server: net.Server, onConnection: (socket: Socket) => void = () => {}) {
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    onConnection(socket)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return (server.address() as AddressInfo).port
}

/** A client that may go on writing after the server's FIN, as a client busy sending does; what it receives is kept. */
async function connect (port: number) {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  const state = { received: '', ended: false, error: undefined as string | undefined }
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => { state.received += chunk })
  socket.on('end', () => { state.ended = state.error === undefined })
  socket.on('error', (err: NodeJS.ErrnoException) => { state.error ??= err.code })
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  await once(socket, 'connect')
  return { socket, state, closed }
}

/** Writes `chunk` over and over, as fast as the peer reads, until `maxBytes` or until the connection goes; the bytes written. */
async function writeOn (socket: Socket, chunk: Buffer, maxBytes = 64 * 1024 * 1024): Promise<number> {
  let written = 0
  while (written < maxBytes && socket.writable) {
    written += chunk.length
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => { socket.off('drain', done); socket.off('close', done); resolve() }
        socket.on('drain', done)
        socket.on('close', done)
      })
    }
  }
  return written
}

t.test('lingeringClose: the client reads all that was written, then the end; what it goes on sending is dropped up to `bytes`, then no longer read', async (t) => {
  let server: Socket | undefined
  const port = await listen(t, net.createServer(), (socket) => {
    server = socket
    socket.write('the answer')
    // A peer that never closes: the socket goes `ms` after the answer was flushed.
    lingeringClose(socket, { ms: 100, bytes: 64 * 1024 })
  })
  const client = await connect(port)
  const written = await writeOn(client.socket, Buffer.alloc(16 * 1024, 'x'))
  await client.closed
  await until(() => server?.destroyed === true)
  t.equal(client.state.received, 'the answer', 'the whole answer')
  t.ok(client.state.ended, 'then the end of the connection, before any error')
  // `bytes`, then what the socket's stream buffers up to its high-water mark, and a read of the
  // socket (64 kB) beyond each: whatever the speed of either side.
  const bound = 64 * 1024 + server!.readableHighWaterMark + 2 * 64 * 1024
  t.ok(server!.bytesRead <= bound, `the server read ${server!.bytesRead} bytes of the ${written} written`)
})

t.test('lingeringClose: a client that closes its side has the connection closed at once, without a reset', async (t) => {
  let server: Socket | undefined
  const port = await listen(t, net.createServer(), (socket) => {
    server = socket
    socket.write('the answer')
    // Far longer than the test may take: only the client's end closes the connection.
    lingeringClose(socket, { ms: 600_000 })
    lingeringClose(socket, { ms: 0 })
  })
  const client = await connect(port)
  client.socket.write('x'.repeat(1000))
  await until(() => client.state.ended)
  client.socket.end()
  await client.closed
  await until(() => server?.destroyed === true, 20_000)
  t.equal(client.state.received, 'the answer')
  t.equal(client.state.error, undefined, 'no reset')
  t.ok(server!.bytesRead >= 1000, 'what the client sent meanwhile was read (and dropped)')
  lingeringClose(server!)
  t.pass('a destroyed socket is left as it is')
})

t.test('lingeringClose on a socket already ended: it waits `ms`, then the socket is destroyed', async (t) => {
  let server: Socket | undefined
  const port = await listen(t, net.createServer({ allowHalfOpen: true }), (socket) => {
    server = socket
    socket.end('the answer', () => lingeringClose(socket, { ms: 50 }))
  })
  const client = await connect(port)
  await until(() => server?.destroyed === true)
  client.socket.end()
  await client.closed
  t.equal(client.state.received, 'the answer')
  t.ok(client.state.ended)
})

t.test('closeAfterAnswer: after the answer nothing more is read as HTTP: a request sent then is not processed', async (t) => {
  const seen: string[] = []
  const clientErrors: string[] = []
  const server = http.createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`)
    if (request.url !== '/refuse') return response.end('ok')
    closeAfterAnswer(request, { ms: 600_000 })
    response.writeHead(413, { connection: 'close', 'content-length': 7 }).end('refused')
  })
  // node:http reports the request it was left parsing when the client closes: by then the socket
  // is destroyed (lib/framework-errors.ts's handler then says nothing).
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    clientErrors.push(`${err.code}, destroyed: ${socket.destroyed}`)
    socket.destroy()
  })
  let serverSocket: Socket | undefined
  const port = await listen(t, server, (socket) => { serverSocket = socket })
  const client = await connect(port)
  client.socket.write('POST /refuse HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789')
  // The server's FIN comes once the connection lingers: what is sent after it is never parsed.
  await until(() => client.state.ended)
  client.socket.write(`${'x'.repeat(90)}GET /after HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  client.socket.end()
  await client.closed
  await until(() => serverSocket?.destroyed === true, 20_000)
  t.match(client.state.received, /^HTTP\/1\.1 413 Payload Too Large\r\n(?:[^\r]+\r\n)*connection: close\r\n(?:[^\r]+\r\n)*\r\nrefused$/i, 'one answer, whole')
  t.same(seen, ['POST /refuse'], 'the request sent after the answer was not processed')
  t.same(clientErrors, ['HPE_INVALID_EOF_STATE, destroyed: true'], 'the client\'s end closed the connection before node:http reported the unfinished request')
  t.equal(client.state.error, undefined, 'no reset: the client closed, then the server')
})

t.test('closeAfterAnswer: a body refused without being read (by its Content-Length) is not read after the answer either', async (t) => {
  let server: Socket | undefined
  const port = await listen(t, http.createServer((request, response) => {
    closeAfterAnswer(request, { ms: 100, bytes: 64 * 1024 })
    response.writeHead(413, { connection: 'close', 'content-length': 7 }).end('refused')
  }), (socket) => { server = socket })
  const client = await connect(port)
  client.socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`)
  const written = await writeOn(client.socket, Buffer.alloc(16 * 1024, 'x'))
  await client.closed
  await until(() => server?.destroyed === true)
  t.match(client.state.received, /\r\n\r\nrefused$/, 'the whole answer')
  t.ok(client.state.ended, 'then the end of the connection')
  // What node:http buffered for the unread request (its stream's and the socket's high-water
  // marks), what the linger drops, a read of the socket beyond each: not the gigabyte announced.
  t.ok(server!.bytesRead < 1024 * 1024, `the server read ${server!.bytesRead} bytes of the ${written} written`)
})

/** The chunks of a chunked body read raw off `port` for GET /, and whether the final chunk came. */
async function chunksOf (port: number) {
  const client = await connect(port)
  client.socket.end('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await client.closed
  const body = client.state.received.slice(client.state.received.indexOf('\r\n\r\n') + 4)
  return { body, last: body.endsWith('\r\n0\r\n\r\n') }
}

t.test('cutAtEnd: what was written and what end() is given arrive; the final chunk does not, the connection closes in its place', async (t) => {
  const port = await listen(t, http.createServer((request, response) => {
    response.write('line 1\n')
    cutAtEnd(response)
    response.end('line 2\n')
  }))
  const cut = await chunksOf(port)
  t.equal(cut.body, '7\r\nline 1\n\r\n7\r\nline 2\n\r\n', 'both chunks, and no final one')
  t.notOk(cut.last)

  const ended = await chunksOf(await listen(t, http.createServer((request, response) => {
    response.write('line 1\n')
    response.end()
  })))
  t.ok(ended.last, 'a response that ends normally has its final chunk')

  // end() with neither chunk nor socket: the response is destroyed.
  const detached = new http.ServerResponse(new http.IncomingMessage(new net.Socket()))
  cutAtEnd(detached)
  detached.end(() => {})
  t.ok(detached.destroyed, 'a response without a socket is destroyed')
})
