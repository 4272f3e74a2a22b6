import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startServer, until, type RunningServer } from '../helpers/index.js'
import { get } from '../helpers/shutdown.js'

// The close that loses nothing (plugins/shutdown.ts) through the production entry point
// (dist/bundle/server.js) on SIGTERM: a process of its own to signal, under real clients. The
// in-process close (app.close()): test/plugins/shutdown.test.ts.

interface StreamRead {
  status: number
  headers: http.IncomingHttpHeaders
  /** The chunked body ended with its final chunk. */
  complete: boolean
  /** The error the client saw, if any: `aborted` when the body was cut. */
  error?: string
  lines: number
  /** What came after the last newline: empty when the body ends at a line boundary. */
  tail: string
  /** Lines that did not parse as a user (the first and last line of every chunk are checked). */
  broken: number
}

/** Reads an NDJSON body as fast as it comes until the connection closes, keeping counts rather than the (large) body. */
function readStream (url: string): Promise<StreamRead> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      const read: StreamRead = { status: res.statusCode!, headers: res.headers, complete: false, lines: 0, tail: '', broken: 0 }
      const check = (line: string | undefined) => {
        try { if (JSON.parse(line ?? '').name === undefined) read.broken++ } catch { read.broken++ }
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        const lines = (read.tail + chunk).split('\n')
        read.tail = lines.pop()!
        read.lines += lines.length
        if (lines.length > 0) {
          check(lines[0])
          check(lines.at(-1))
        }
      })
      res.on('error', (err) => { read.error = err.message })
      res.on('close', () => resolve({ ...read, complete: res.complete }))
    }).on('error', reject)
  })
}

/** Resolves once the server has begun its close (SIGTERM handled). */
async function terminate (server: RunningServer) {
  server.child.kill('SIGTERM')
  await server.waitForLog((entry) => entry.msg === 'closing: new connections refused, open ones drained')
}

t.test('SIGTERM: /ready turns 503 at once, for requests on open connections; new connections are refused', async (t) => {
  // The drain ends once the last connection has closed, long before SHUTDOWN_DRAIN.
  const server = await startServer(t, { SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const before = await get(`${server.url}/ready`, agent)
  t.equal(before.status, 200)
  t.equal(before.headers.connection, 'keep-alive')

  await terminate(server)
  const during = await get(`${server.url}/ready`, agent)
  t.equal(during.status, 503, 'not ready from the moment SIGTERM arrives')
  t.match(JSON.parse(during.body), { statusCode: 503, code: 'API_ERR_NOT_READY', message: 'Not ready: the service is shutting down' })
  t.equal(during.headers.connection, 'close', 'and the connection is closed after the answer')
  t.equal((await get(`${server.url}/hello`, agent).catch((err: NodeJS.ErrnoException) => err.code)), 'ECONNREFUSED', 'a new connection is refused')
  t.equal(await server.exited, 0, 'exit 0')
})

t.test('SIGTERM under 50 keep-alive clients looping on GET /users: no request lost once sent, 5 runs out of 5', async (t) => {
  for (let run = 1; run <= 5; run++) {
    const server = await startServer(t, { SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' })
    let answered = 0
    let closeAnswers = 0
    const lost: string[] = []
    let refused = 0
    let looping = 0
    const client = async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      try {
        for (let mine = 0; ; mine++) {
          const answer = await get(`${server.url}/users`, agent)
          if (answer.status !== 200 || !answer.complete) lost.push(`${answer.status}, complete: ${answer.complete}`)
          if (mine === 0) looping++
          answered++
          if (answer.headers.connection === 'close') closeAnswers++
        }
      } catch (err) {
        // Refused: the request never reached the server (it is stopping); the client would go to
        // another replica. Anything else (a reset, a hang-up) is a request lost after it was sent.
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') refused++
        else lost.push(String((err as NodeJS.ErrnoException).code ?? err))
      } finally {
        agent.destroy()
      }
    }
    const clients = Array.from({ length: 50 }, client)
    // Every client connected and looping (a connection that the kernel has taken but the server
    // not yet accepted is reset when a listener closes: that is not this test's case).
    await until(() => looping === 50)
    server.child.kill('SIGTERM')
    await Promise.all(clients)
    t.same(lost, [], `run ${run}: no request lost (${answered} answered, ${closeAnswers} with Connection: close, then ${refused} clients refused)`)
    t.equal(refused, 50, `run ${run}: every client ends by a refused connection`)
    t.equal(await server.exited, 0, `run ${run}: exit 0`)
  }
})

t.test('SIGTERM with 20 open NDJSON streams: every client gets whole lines, then sees the body was cut; exit 0', async (t) => {
  // Twenty streams from one address: more than STREAMS_PER_CLIENT lets one open by default.
  const server = await startServer(t, { SHUTDOWN_DRAIN: '300', STREAMS_PER_CLIENT: '20' })
  const streams = Array.from({ length: 20 }, () => readStream(`${server.url}/userStream?count=10000000`))
  // At info a request is written when it ends, or once it has run for a second (lib/access-log.ts).
  const started = () => server.logs.filter((line) => line.msg === 'request running').length >= 20
  await server.waitForLog(() => started())
  await terminate(server)
  const answers = await Promise.all(streams)
  for (const [index, answer] of answers.entries()) {
    t.equal(answer.status, 200, `stream ${index}: 200`)
    t.equal(answer.complete, false, `stream ${index}: the chunked body has no final chunk: the client sees it was cut`)
    t.equal(answer.error, 'aborted', `stream ${index}: node:http's client reports it`)
    t.equal(answer.headers['x-accel-buffering'], 'no', `stream ${index}: X-Accel-Buffering: no`)
    t.equal(answer.tail, '', `stream ${index}: ends at a line boundary`)
    t.ok(answer.lines > 0 && answer.lines < 10_000_000, `stream ${index}: ${answer.lines} lines, cut short`)
    t.equal(answer.broken, 0, `stream ${index}: whole users`)
  }
  t.equal(await server.exited, 0, 'exit 0, well within the grace')
  t.equal(server.logs.filter((entry) => entry.msg === 'ndjson stream ended early: the service is shutting down').length, 20)
})

t.test('SIGTERM: stops accepting, finishes the request in flight, exits 0', async (t) => {
  // The upload is finished whenever the test gets to it: no drain or grace runs out before.
  const server = await startServer(t, { SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' })
  const port = Number(new URL(server.url).port)
  const client = {
    clientName: 'Alp',
    clientEmail: 'alp@foo.com',
    clientAge: 25,
    clientInterestedIn: ['haskell']
  }
  const body = JSON.stringify(client)
  const half = Math.floor(body.length / 2)

  // A slow upload: the headers and half of the body, the rest only after SIGTERM.
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const answer = new Promise<string>((resolve) => {
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  socket.write('POST /marketing HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`)
  await server.waitForLog((entry) => entry.msg === 'request running')

  server.child.kill('SIGTERM')
  await server.waitForLog((entry) => entry.msg === 'closing: finishing in-flight requests')
  // The listener closes (new connections are refused) while the request in flight goes on.
  const attempt = () => new Promise<string>((resolve) => {
    const late = net.connect(port, '127.0.0.1')
    late.on('connect', () => { late.destroy(); resolve('accepted') })
    late.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
  // Until the listener is gone a connection may still be taken (and answered 503) or reset.
  let refused = await attempt()
  for (const deadline = Date.now() + 10_000; refused !== 'ECONNREFUSED' && Date.now() < deadline;) {
    await sleep(20)
    refused = await attempt()
  }
  t.equal(refused, 'ECONNREFUSED', 'a new connection is refused')
  t.equal(server.child.exitCode, null, 'still running while the request is in flight')

  socket.write(body.slice(half))
  const response = await answer
  t.match(response, /^HTTP\/1\.1 200 OK\r\n/, 'the request in flight completes')
  t.match(response, /"subject":"Hey Alp, we miss you!"/)
  t.equal(await server.exited, 0, 'then the process exits 0')
})
