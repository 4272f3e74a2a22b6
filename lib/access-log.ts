import type { Socket } from 'node:net'
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { literal, milliseconds as millisecondsBytes, raw } from './json-bytes.js'
import { RequestLine, deferLine, milliseconds, requestBytes, requestJson, writeLine, writesAt } from './logger.js'

/** pino's levels, by number. */
const DEBUG = 20
const INFO = 30

/** `,"res":{"statusCode":200},"responseTime":` encoded, for each status from 100 to 599 as it first comes. */
const STATUSES = new Array<Buffer | undefined>(500).fill(undefined)
const statusMember = (status: number) => literal(`,"res":{"statusCode":${status}},"responseTime":`)
function statusBytes (status: number): Buffer {
  return Number.isInteger(status) && status >= 100 && status < 600 ? (STATUSES[status - 100] ??= statusMember(status)) : statusMember(status)
}
const COMPLETED = literal(',"msg":"request completed"')

/**
 * A request's `request completed` line: its members written into a buffer (lib/json-bytes.ts), or
 * as a string. Written at the end of the turn the request ended in, from its request and reply,
 * which no longer change: the reply's time stopped with its last byte.
 */
const COMPLETED_LINE = new RequestLine(
  INFO,
  (buffer: Buffer, at: number, request: FastifyRequest, reply: FastifyReply): number => {
    at = requestBytes(buffer, at, request)
    at = raw(buffer, at, statusBytes(reply.statusCode))
    at = millisecondsBytes(buffer, at, reply.elapsedTime)
    return raw(buffer, at, COMPLETED)
  },
  (request, reply) => `${requestJson(request)},"res":{"statusCode":${reply.statusCode}},"responseTime":${milliseconds(reply.elapsedTime)},"msg":"request completed"`
)

/**
 * How often the requests still running are looked at: one running this long is written once
 * (`request running`), within twice this of its start; one whose connection has closed before
 * its answer was sent is written (`request aborted…`) and forgotten.
 */
export const RUNNING_CHECK_MS = 1000

/**
 * Reads a connection's peer address while it is open: Node keeps it once read (`remoteAddress`,
 * `remotePort`), and a line written after the connection has closed (at the end of the turn, after
 * an answer with `Connection: close` or to HTTP/1.0; a client gone) still names the client. Unread,
 * both were missing from such lines. Read only where a line will: the first read of a connection
 * asks the kernel (`getpeername`; figures: bench/README.md). Whether there was one to read.
 */
function keepPeerAddress (socket: Socket | undefined): boolean {
  return socket?.remoteAddress !== undefined
}

/** Where a running request's slot is kept, on its reply. */
const SLOT = Symbol('access log slot')
type Slotted = FastifyReply & { [SLOT]?: number | undefined }

/**
 * Server option `logController` (Fastify's own mechanism for its request lines): one line per
 * request at info, when it ends, instead of Fastify's two ("incoming request" when it starts,
 * "request completed" when it ends). That line holds what both held: the request (method, URL with
 * its credentials redacted, host, remote address and port), the status, the response time, and the
 * request logger's bindings (reqId, the trace ids); written as pino writes it, but without making
 * pino's child logger for the request, and at the end of the turn, byte by byte, with the lines of
 * all the requests that ended in it (COMPLETED_LINE; figures: bench/README.md). "incoming request"
 * is written at debug. A request that has not ended is not left unseen: every RUNNING_CHECK_MS, the requests
 * running for longer are written once, and those whose client has gone before the answer was sent
 * are written as aborted (Fastify writes nothing more of them: its `onResponse` never comes).
 */
export class AccessLogController extends LogController {
  /**
   * The requests written at info that have not ended, each in a slot of its own (kept on its
   * reply): a slot freed is taken by the next request. An array, not a Map: a Map keyed by
   * objects that come and go 40,000 times a second is rehashed, shrunk and grown again, and cost
   * a tenth of the line itself.
   */
  readonly #running: Array<FastifyReply | undefined> = []
  readonly #free: number[] = []
  /** Whether a slot's request has had its `request running` line. */
  readonly #reported: boolean[] = []
  #count = 0
  readonly #checkMs: number
  #timer: NodeJS.Timeout | undefined

  /** `checkMs`: how often the requests still running are looked at (RUNNING_CHECK_MS; shorter in tests). */
  constructor ({ checkMs = RUNNING_CHECK_MS }: { checkMs?: number } = {}) {
    super()
    this.#checkMs = checkMs
  }

  override incomingRequest (request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const log = request.log
    if (!writesAt(log, INFO)) return
    keepPeerAddress(request.socket)
    const slot = this.#free.pop() ?? this.#running.length
    this.#running[slot] = reply
    this.#reported[slot] = false
    ;(reply as Slotted)[SLOT] = slot
    this.#count++
    this.#timer ??= setInterval(this.#check, this.#checkMs).unref()
    if (writesAt(log, DEBUG)) log.debug({ req: request }, 'incoming request')
  }

  /** Forgets a running request; false if it was not (or no longer) counted as running. */
  #forget (reply: FastifyReply): boolean {
    const slot = (reply as Slotted)[SLOT]
    if (slot === undefined) return false
    ;(reply as Slotted)[SLOT] = undefined
    this.#running[slot] = undefined
    this.#free.push(slot)
    this.#count--
    return true
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const log = request.log
    if (!this.#forget(reply)) {
      // Not counted as running: below info (where an error is still written), its logs off, or
      // written and forgotten already (aborted).
      if (error && !writesAt(log, INFO) && !this.isLogDisabled(request)) this.#errored(error, request, reply)
      return
    }
    if (error) {
      this.#errored(error, request, reply)
    } else if (!deferLine(log, COMPLETED_LINE, request, reply) && !writeLine(log, INFO, COMPLETED_LINE.membersText(request, reply))) {
      log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }

  /** A response that failed (its `error` event): at `error`, with the request. */
  #errored (error: Error, request: FastifyRequest, reply: FastifyReply): void {
    request.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
  }

  /** The requests still running: those whose client has gone are written and forgotten, the long ones written once. */
  readonly #check = (): void => {
    if (this.#count === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
      return
    }
    for (let slot = 0; slot < this.#running.length; slot++) {
      const reply = this.#running[slot]
      if (reply === undefined) continue
      const request = reply.request
      if (reply.raw.writableFinished) {
        // Answered without Fastify's last step (its `frameworkErrors`): the answer's line is the
        // refusal's (lib/framework-errors.ts).
        this.#forget(reply)
      } else if (reply.raw.destroyed) {
        this.#forget(reply)
        request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request aborted: the connection closed before the answer was sent')
      } else if (!this.#reported[slot] && reply.elapsedTime >= this.#checkMs) {
        this.#reported[slot] = true
        request.log.info({ req: request, elapsed: reply.elapsedTime }, 'request running')
      }
    }
  }
}
