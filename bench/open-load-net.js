// The open-model generator's cheapest client (bench/open-load.js): HTTP/1.1 on bare TCP sockets,
// a request's bytes built once and written as they are, an answer read only as far as it takes to
// know its status and where it ends (Content-Length, or the chunks of a chunked body). node:http
// and undici cost the generator several times what the service spends on a small request (figures:
// bench/README.md), which on two shared cores starves the servers it measures.
import net from 'node:net'

const CRLF_CRLF = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')

/**
 * A pool of up to `connections` keep-alive connections to `target` (an origin), one request at a
 * time on each; a request finding them all busy waits its turn, in order, and its wait counts in its
 * latency. `send(scheduled)` sends one; `done(scheduled, status)` or `fail(scheduled)` follows.
 */
export function netSender (target, { path, method, headers, body, connections, done, fail }) {
  const url = new URL(target)
  const head = [`${method} ${path} HTTP/1.1`, `host: ${url.host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  const request = Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n'), body ?? Buffer.alloc(0)])
  const idle = []
  const all = new Set()
  // Requests waiting for a connection: their scheduled times, in order (a ring of indexes would
  // only save the array's occasional compaction).
  let waiting = []
  let waitingHead = 0

  function open () {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true })
    const connection = { socket, scheduled: 0, busy: false, pending: null, state: 'head', status: 0, remaining: 0 }
    all.add(connection)
    socket.on('data', (chunk) => receive(connection, chunk))
    const lost = () => {
      all.delete(connection)
      const index = idle.indexOf(connection)
      if (index !== -1) idle.splice(index, 1)
      if (connection.busy) {
        connection.busy = false
        fail(connection.scheduled)
        next()
      }
    }
    socket.on('error', lost)
    socket.on('close', lost)
    return connection
  }

  function start (connection, scheduled) {
    connection.busy = true
    connection.scheduled = scheduled
    connection.state = 'head'
    connection.pending = null
    connection.socket.write(request)
  }

  /** The next waiting request, on a connection that has room (one that a lost connection freed). */
  function next () {
    if (waitingHead < waiting.length && all.size < connections) start(open(), take())
  }

  function take () {
    const scheduled = waiting[waitingHead++]
    if (waitingHead > 1024 && waitingHead * 2 > waiting.length) {
      waiting = waiting.slice(waitingHead)
      waitingHead = 0
    }
    return scheduled
  }

  function finished (connection) {
    connection.busy = false
    done(connection.scheduled, connection.status)
    if (waitingHead < waiting.length) start(connection, take())
    else idle.push(connection)
  }

  /** Reads an answer's bytes: its head, then its body by length or by chunks, as they come. */
  function receive (connection, chunk) {
    let data = connection.pending === null ? chunk : Buffer.concat([connection.pending, chunk])
    connection.pending = null
    let offset = 0
    while (connection.busy && offset < data.length) {
      if (connection.state === 'head') {
        const end = data.indexOf(CRLF_CRLF, offset)
        if (end === -1) break
        const text = data.latin1Slice(offset, end).toLowerCase()
        connection.status = Number(text.slice(9, 12))
        offset = end + 4
        const length = /\r\ncontent-length: *(\d+)/.exec(text)
        if (length !== null) {
          connection.state = 'body'
          connection.remaining = Number(length[1])
        } else if (text.includes('\r\ntransfer-encoding: chunked')) {
          connection.state = 'chunk-size'
        } else {
          connection.state = 'body'
          connection.remaining = 0
        }
        if (connection.state === 'body' && connection.remaining === 0) finished(connection)
      } else if (connection.state === 'body') {
        const taken = Math.min(connection.remaining, data.length - offset)
        connection.remaining -= taken
        offset += taken
        if (connection.remaining === 0) finished(connection)
      } else if (connection.state === 'chunk-size') {
        const end = data.indexOf(CRLF, offset)
        if (end === -1) break
        const size = parseInt(data.latin1Slice(offset, end), 16)
        offset = end + 2
        // A chunk's data and its CRLF; the last chunk (0) is followed by the final CRLF (no trailers).
        connection.state = 'chunk-data'
        connection.remaining = size + 2
        if (size === 0) connection.state = 'last'
      } else {
        const taken = Math.min(connection.remaining, data.length - offset)
        connection.remaining -= taken
        offset += taken
        if (connection.remaining === 0) {
          if (connection.state === 'last') finished(connection)
          else connection.state = 'chunk-size'
        }
      }
    }
    if (offset < data.length && connection.busy) connection.pending = data.subarray(offset)
    data = null
  }

  return {
    send (scheduled) {
      const connection = idle.pop() ?? (all.size < connections ? open() : undefined)
      if (connection === undefined) waiting.push(scheduled)
      else start(connection, scheduled)
    },
    close () {
      for (const connection of all) connection.socket.destroy()
    }
  }
}
