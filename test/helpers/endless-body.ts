import { once } from 'node:events'
import net, { type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { LINGER_BYTES } from '../../lib/lingering-close.js'

/** What a client that kept sending a body saw, and what the server read of it. */
export interface EndlessBodyResult {
  /** The status line and headers of the answer, header names in lower case. */
  status: number
  headers: Record<string, string>
  /** The answer's body, by its Content-Length: whole, or shorter when the connection went first. */
  body: string
  /** The whole answer arrived (as many body bytes as its Content-Length says). */
  whole: boolean
  /** The server ended the connection (its FIN) after the answer, before any error. */
  ended: boolean
  /** Bytes of the body the client handed to its socket before the connection went. */
  written: number
  /** The error that ended the client's side, when there was one (a reset once the server closed). */
  error?: string
  /** Bytes the server read from this connection, once it was closed. */
  serverRead: number
}

/** Splits a raw HTTP/1.1 answer (Content-Length framed) into its status, headers and body. */
function parseAnswer (raw: Buffer) {
  const split = raw.indexOf('\r\n\r\n')
  if (split === -1) return { status: 0, headers: {}, body: '', whole: false }
  const [statusLine = '', ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  const length = Number(headers['content-length'] ?? NaN)
  const rest = raw.subarray(split + 4)
  const body = rest.subarray(0, Number.isNaN(length) ? rest.length : length)
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8'), whole: body.length === length }
}

/**
 * Sends `head` (a request line and headers, ending with the blank line) to a listening app, then
 * `chunk` over and over, as fast as the server takes it, whatever the server answers: a client that
 * keeps streaming a body far over any limit. It stops at `maxBytes` (it then ends the chunked body
 * with `end`, if given, and its side of the connection) or when its writes fail because the server
 * has closed the connection. Resolves once the connection is closed, with what the client received
 * and the bytes the server read from the connection (its socket's bytesRead).
 */
export async function sendEndlessBody (app: FastifyInstance, head: string, chunk: Buffer, { end = '', maxBytes = 64 * 1024 * 1024 } = {}): Promise<EndlessBodyResult> {
  let serverSocket: Socket | undefined
  const onConnection = (socket: Socket) => { serverSocket ??= socket }
  app.server.on('connection', onConnection)
  const { port } = app.server.address() as net.AddressInfo
  // Half-open allowed: the client goes on writing after the server's FIN, as a client busy sending does.
  const client = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  const received: Buffer[] = []
  let written = 0
  let ended = false
  let error: string | undefined
  client.on('data', (data: Buffer) => received.push(data))
  client.on('end', () => { ended = error === undefined })
  client.on('error', (err: NodeJS.ErrnoException) => { error ??= err.code ?? err.message })
  const closed = new Promise<void>((resolve) => client.on('close', () => resolve()))
  await new Promise<void>((resolve) => client.once('connect', resolve))
  client.write(head)
  // Write while the kernel takes it; wait for a drain, or for the connection to go.
  // (An error destroys the socket.)
  while (written < maxBytes && !client.destroyed) {
    if (client.write(chunk)) {
      written += chunk.length
      if (written % (1024 * 1024) < chunk.length) await new Promise((resolve) => setImmediate(resolve))
      continue
    }
    written += chunk.length
    await new Promise<void>((resolve) => {
      const done = () => { client.off('drain', done); client.off('close', done); resolve() }
      client.on('drain', done)
      client.on('close', done)
    })
  }
  if (!client.destroyed) client.end(end)
  await closed
  app.server.off('connection', onConnection)
  const server = serverSocket as Socket
  if (!server.destroyed) await new Promise((resolve) => server.once('close', resolve))
  return { ...parseAnswer(Buffer.concat(received)), ended, written, serverRead: server.bytesRead, ...(error === undefined ? {} : { error }) }
}

/**
 * Asserts an answer that leaves the rest of a body unread: the whole answer with `Connection:
 * close`, then the server's end of the connection, having read no more than `limit`, what the close
 * drops at most, and what node:http and the socket buffer (up to their high-water marks, 64 kB per
 * read): bounded whatever the speed of either side.
 */
export function assertBodyLeftUnread (t: Test, sent: EndlessBodyResult, limit: number, label: string, status: number): void {
  t.equal(sent.status, status, `${label}: ${status}`)
  t.ok(sent.whole, `${label}: the whole answer arrived`)
  t.equal(sent.headers.connection, 'close', `${label}: Connection: close`)
  t.ok(sent.ended, `${label}: then the server ended the connection`)
  t.ok(sent.serverRead < limit + LINGER_BYTES + 1024 * 1024, `${label}: the server read ${sent.serverRead} bytes of the ${sent.written} written`)
}

/** Asserts a body over `limit` refused as it must be: the 413 JSON error (`code`), the rest as assertBodyLeftUnread. */
export function assertBodyRefused (t: Test, sent: EndlessBodyResult, limit: number, label: string, code = 'FST_ERR_CTP_BODY_TOO_LARGE'): void {
  assertBodyLeftUnread(t, sent, limit, label, 413)
  t.match(JSON.parse(sent.body), { statusCode: 413, code }, `${label}: the JSON error`)
}

/** One client of sendEndlessBody: the listening app it sends to, its request head, the chunk it repeats, its options. */
export interface EndlessBodyRequest {
  app: FastifyInstance
  head: string
  chunk: Buffer
  end?: string
  maxBytes?: number
}

/**
 * sendEndlessBody for each request, side by side: each connection waits out its own lingering
 * close (lib/lingering-close.ts, LINGER_MS), so that together they wait about once. Resolves with
 * what each saw, in the order given.
 *
 * sendEndlessBody takes as its own the first connection its app accepts once it has started, so
 * each starts only once the app has accepted the connection of the one before.
 */
export async function sendEndlessBodies (requests: readonly EndlessBodyRequest[]): Promise<EndlessBodyResult[]> {
  const sending: Array<Promise<EndlessBodyResult>> = []
  for (const { app, head, chunk, ...options } of requests) {
    const accepted = once(app.server, 'connection')
    const sent = sendEndlessBody(app, head, chunk, options)
    // Awaited below with the others: a failure meanwhile is not an unhandled rejection.
    sent.catch(() => {})
    sending.push(sent)
    await accepted
  }
  return Promise.all(sending)
}
