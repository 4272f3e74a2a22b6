import type { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import type { FastifyReply } from 'fastify'

// Closing a connection on which the client may still be sending, without losing what was written
// to it: a socket closed with unread bytes, or that receives more once closed, resets the connection
// (TCP RST), and a client that gets the reset may lose the answer it has not read yet. So the close
// "lingers", as Apache's and nginx's do: our side ends first, what arrives for a little while is
// read and dropped, then the socket is destroyed.

/** How long a closing connection waits, once all it was sent has been flushed, for the client to close its side. */
export const LINGER_MS = 2000
/** How much a closing connection reads and drops at most; then it reads nothing more (the client's sends wait). */
export const LINGER_BYTES = 256 * 1024

export interface LingerOptions {
  /** Milliseconds after our last byte is flushed before the socket is destroyed (LINGER_MS). */
  ms?: number
  /** Bytes read and dropped at most (LINGER_BYTES). */
  bytes?: number
}

const lingering = new WeakSet<Socket>()

/**
 * Closes the connection after what was written to it: our side ends at once (FIN, after the
 * answer), so the client reads the whole answer and then the end of the connection; the socket is
 * destroyed when the client closes its side, or `ms` after our last byte was flushed.
 *
 * Meanwhile nothing more reaches node:http's parser (RFC 9112, 9.6: no further request on a
 * connection we close is processed): what arrives is dropped, up to `bytes`, then no longer read.
 */
export function lingeringClose (socket: Socket, { ms = LINGER_MS, bytes = LINGER_BYTES }: LingerOptions = {}): void {
  if (socket.destroyed || lingering.has(socket)) return
  lingering.add(socket)
  let timer: NodeJS.Timeout | undefined
  const close = () => {
    clearTimeout(timer)
    socket.destroy()
  }
  dropInput(socket, bytes)
  // Before node:http's own listener, which reports the request it was left parsing as a client
  // error: the socket is already destroyed then, and lib/framework-errors.ts says nothing.
  socket.prependOnceListener('end', close)
  socket.once('close', () => clearTimeout(timer))
  const flushed = () => { timer = setTimeout(close, ms) }
  if (socket.writableFinished) flushed()
  else socket.once('finish', flushed)
  if (!socket.writableEnded) socket.end()
  socket.resume()
}

/**
 * Takes the socket's reading from node:http's parser: what arrives from now on is dropped, up to
 * `bytes`, then no longer read (the client's sends wait). No further request on it is parsed.
 */
export function dropInput (socket: Socket, bytes = LINGER_BYTES): void {
  // node:http's parser reads the socket through its 'data' listener, or from C++ until a 'data'
  // listener is added (its wrapper of `on` then hands the reading back to the stream): after this,
  // only ours reads.
  socket.removeAllListeners('data')
  let dropped = 0
  socket.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped >= bytes) socket.pause()
  })
}

/**
 * For an answer that refuses the request's body (413, or any answer sent before the body was
 * read: bodyStillArriving): reads no more of the body, and has
 * node:http's close of the connection after the answer linger. The caller answers with
 * `Connection: close`, after which node:http closes the connection with `socket.destroySoon()`:
 * destroyed as soon as the answer is flushed, under a client still sending.
 */
export function closeAfterAnswer (request: IncomingMessage, options: LingerOptions = {}): void {
  request.pause()
  const socket = request.socket
  if (socket instanceof Socket) socket.destroySoon = () => lingeringClose(socket, options)
}

/**
 * Whether some of the request's body has yet to arrive: answered now, node:http would then read it
 * to its end (however long) to keep the connection for the next request. (A request that
 * light-my-request makes has no such state: false.)
 */
export function bodyStillArriving (request: IncomingMessage): boolean {
  return request.complete === false
}

/** closeAfterAnswer for a Fastify reply not sent yet: it goes out with `Connection: close`. */
export function closeAfterReply (reply: FastifyReply, options: LingerOptions = {}): void {
  reply.header('connection', 'close')
  closeAfterAnswer(reply.request.raw, options)
}

/**
 * Makes the response's `end()` close the connection instead of completing the body: what was
 * written, and what `end()` is given, is delivered, but not the last chunk of the chunked body, so
 * that the client (or a proxy) sees the body is incomplete rather than taking it for the whole.
 * (end()'s callback, which a pipe does not pass, is not called.)
 */
export function cutAtEnd (response: ServerResponse, options: LingerOptions = {}): void {
  response.end = function cut (chunk?: unknown, encoding?: unknown) {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
      response.write(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8')
    }
    const socket = response.socket
    if (socket instanceof Socket) lingeringClose(socket, options)
    else response.destroy()
    return response
  } as ServerResponse['end']
}
