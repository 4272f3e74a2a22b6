import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { requestJson, writeLine, writesAt } from './logger.js'

/** pino's levels, by number. */
const DEBUG = 20
const INFO = 30

/**
 * How often the requests still running are looked at: one running this long is written once
 * (`request running`), within twice this of its start; one whose connection has closed before
 * its answer was sent is written (`request aborted…`) and forgotten.
 */
export const RUNNING_CHECK_MS = 1000

/**
 * Server option `logController` (Fastify's own mechanism for its request lines): one line per
 * request at info, when it ends, instead of Fastify's two ("incoming request" when it starts,
 * "request completed" when it ends). That line holds what both held: the request (method, URL with
 * its credentials redacted, host, remote address and port), the status, the response time, and the
 * request logger's bindings (reqId, the trace ids); written as pino writes it, but without making
 * pino's child logger for the request (figures: bench/README.md). "incoming request" is written at
 * debug. A request that has not ended is not left unseen: every RUNNING_CHECK_MS, the requests
 * running for longer are written once, and those whose client has gone before the answer was sent
 * are written as aborted (Fastify writes nothing more of them: its `onResponse` never comes).
 */
export class AccessLogController extends LogController {
  /** The requests written at info that have not ended, and whether their `request running` line is written. */
  readonly #running = new Map<FastifyRequest, FastifyReply>()
  readonly #reported = new WeakSet<FastifyRequest>()
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
    this.#running.set(request, reply)
    this.#timer ??= setInterval(this.#check, this.#checkMs).unref()
    if (writesAt(log, DEBUG)) log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!this.#running.delete(request)) return
    const log = request.log
    const responseTime = reply.elapsedTime
    if (error) {
      log.error({ req: request, res: reply, err: error, responseTime }, 'request errored')
    } else if (!writeLine(log, INFO, `${requestJson(request)},"res":{"statusCode":${reply.statusCode}},"responseTime":${responseTime},"msg":"request completed"`)) {
      log.info({ req: request, res: reply, responseTime }, 'request completed')
    }
  }

  /** The requests still running: those whose client has gone are written and forgotten, the long ones written once. */
  readonly #check = (): void => {
    if (this.#running.size === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
      return
    }
    for (const [request, reply] of this.#running) {
      if (reply.raw.writableFinished) {
        // Answered without Fastify's last step (its `frameworkErrors`): the answer's line is the
        // refusal's (lib/framework-errors.ts).
        this.#running.delete(request)
      } else if (reply.raw.destroyed) {
        this.#running.delete(request)
        request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request aborted: the connection closed before the answer was sent')
      } else if (!this.#reported.has(request) && reply.elapsedTime >= this.#checkMs) {
        this.#reported.add(request)
        request.log.info({ req: request, elapsed: reply.elapsedTime }, 'request running')
      }
    }
  }
}
