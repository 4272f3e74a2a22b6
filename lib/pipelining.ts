import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { dropInput, lingeringClose } from './lingering-close.js'
import { throttled } from './throttle.js'
import { DROP_LOG_INTERVAL_MS } from './connections.js'

/**
 * Requests of one connection being answered at once: those received and not yet answered in full.
 * HTTP/1.1 lets a client send requests without waiting for the answers (pipelining); node:http
 * parses every request of what it has read (64 kB: some 1,700 short GETs) and hands each to the
 * app, whose answers wait in memory, in order, for the client to read them. Clients that pipeline
 * (few do: browsers and proxies do not) send a handful at a time.
 */
export const PIPELINE_DEPTH = 16

/**
 * How long (ms) a connection cut for its pipelining may go without taking any of its answers
 * before it is destroyed: the requests node:http parsed past the depth (up to some 1,700 of them
 * per read) are held by node:http until the connection is gone, and a client that reads nothing
 * would otherwise keep them, and the connection, for as long as it stays.
 */
export const CUT_IDLE_MS = 10_000

interface Pipeline {
  /** Requests handed to the app and not answered yet. */
  inFlight: number
  /** The answer to the latest request handed on. */
  last: ServerResponse
  /** Past the depth: no request is handed on any more, and the connection closes once the answers in flight are sent. */
  cut: boolean
}

/**
 * Holds `server`'s connections to `depth` requests in flight each. The request past it, and every
 * one after it on that connection, is not handed to the app: nothing more of the connection is
 * read, the answers in flight are sent (the last with `Connection: close` when it has not begun),
 * then the connection closes, lingering (lib/lingering-close.ts), or is destroyed if its client
 * takes nothing of them for `idleMs` (CUT_IDLE_MS). RFC 9112, 9.3.2: a client whose
 * connection closes before the answers to all its pipelined requests sends the others again.
 * `logCut` is told how many connections were cut so, at most once every DROP_LOG_INTERVAL_MS.
 *
 * node:http has no such bound: `maxRequestsPerSocket` counts every request of a keep-alive
 * connection, pipelined or not (and answers those past it with a bare 503), and it pauses the
 * socket only once an answer backs up, after the parser has handed on the whole buffer it read.
 * The app's handler is wrapped here: the requests past the depth cost their parsing only.
 */
export function boundPipelining (server: Server, depth: number, logCut: (cut: number) => void, idleMs = CUT_IDLE_MS): void {
  const handlers = server.listeners('request') as Array<(request: IncomingMessage, response: ServerResponse) => void>
  server.removeAllListeners('request')
  const pipelines = new WeakMap<Socket, Pipeline>()
  const log = throttled(DROP_LOG_INTERVAL_MS, logCut)
  server.on('request', function bounded (request: IncomingMessage, response: ServerResponse) {
    const socket = request.socket
    let pipeline = pipelines.get(socket)
    if (pipeline === undefined) pipelines.set(socket, pipeline = { inFlight: 0, last: response, cut: false })
    if (pipeline.cut) return
    if (pipeline.inFlight >= depth) {
      cut(socket, pipeline, idleMs)
      log()
      return
    }
    pipeline.inFlight++
    pipeline.last = response
    const line = pipeline
    response.once('close', () => {
      if (--line.inFlight === 0 && line.cut) lingeringClose(socket)
    })
    for (const handler of handlers) handler.call(server, request, response)
  })
}

/**
 * Stops handing on the connection's requests; it closes once the answers in flight are sent, or
 * is destroyed once its client has taken nothing of them for `idleMs`.
 */
function cut (socket: Socket, pipeline: Pipeline, idleMs: number): void {
  pipeline.cut = true
  dropInput(socket)
  socket.setTimeout(idleMs, () => socket.destroy())
  // node:http closes a connection after an answer with Connection: close: lingering, not at once.
  socket.destroySoon = () => lingeringClose(socket)
  if (!pipeline.last.headersSent) pipeline.last.shouldKeepAlive = false
}
