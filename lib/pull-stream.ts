import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyReply } from 'fastify'
import { cutAtEnd } from './lingering-close.js'

/** A streamed body is written in chunks of about this many characters (and its stream buffers one). */
export const CHUNK_SIZE = 64 * 1024

/** Whether a value is a promise (or any thenable): a source that makes us wait. */
export const isThenable = <T = unknown> (value: unknown): value is PromiseLike<T> =>
  typeof (value as PromiseLike<T> | null)?.then === 'function'

/** What a PullStream pulls its body from. */
export interface PullSource {
  /**
   * The next piece of the body (an item's line, a chunk of a list…), undefined at its end: at once
   * when the source has it, a promise when it makes us wait. Throwing (or rejecting) is a failure.
   */
  next (): string | undefined | PromiseLike<string | undefined>
  /**
   * True once the last piece is given (a list that knows its end): the body ends with that piece,
   * without pulling again, and a stop that comes meanwhile no longer cuts it.
   */
  readonly done?: boolean
  /** How many items it has produced: the logs say how far a body got, and the first one commits the status. */
  readonly items: number
  /**
   * Stops it: it releases what it holds (an iterator's `return()`, a listing's close). Called once:
   * when the body is cut, or when its stream is destroyed, which it is at its end too.
   */
  close (): unknown
}

/** The log lines of a PullStream, each with `items`, how far the body got. */
export interface PullLog {
  /** info: the stop (the service shutting down) cut the body. */
  stopped: string
  /** error, with `err`: the source failed once the body had begun, and the body was cut. */
  failed: string
  /** info: the stream was destroyed before its end: the connection closed. */
  left: string
  /** warn, with `err` (and no `items`): the source failed to close. */
  closeFailed: string
}

export interface PullOptions {
  log: PullLog
  /** Once aborted, the body is cut after what was produced (`fastify.drainEnded`: the service is shutting down). */
  stop?: AbortSignal | undefined
  /** What the body begins with, written already (a list's first chunk): the status is committed. */
  head?: string
  /**
   * The error the stream is destroyed with when the stop comes before anything was produced, for
   * Fastify to answer with instead (a 503 the client may retry). Without it, the body is cut.
   */
  refusal?: () => Error
}

/**
 * A streamed body: a readable stream that pulls the pieces of the body from a source only when
 * its consumer (the response, through pipe) wants more bytes, so that a slow client slows the
 * source rather than the service buffering the body.
 *
 * - Pieces are gathered into chunks of CHUNK_SIZE; a chunk is sent early when the source makes us
 *   wait (so pieces are written as they are produced), and the event loop gets a turn between
 *   chunks, so that other requests are served meanwhile.
 * - Destroyed (the client went away): the source is closed; nothing more is pulled; logged.
 * - Cut short, by the stop (`options.stop`: no more pieces are pulled) or by the source failing:
 *   the source is closed and never pulled again. Once the status is committed (a head, or an item
 *   produced) what was produced is delivered, then the connection is closed without the final
 *   chunk of the body (lib/lingering-close.ts, `cutAtEnd`), so that the client, or a proxy, sees
 *   the body is incomplete rather than taking it for the whole. Before it, the stream is destroyed
 *   with the source's error, or the stop's `refusal`, and Fastify answers with an error response.
 */
export class PullStream extends Readable {
  readonly #reply: Pick<FastifyReply, 'log' | 'raw'>
  readonly #source: PullSource
  readonly #log: PullLog
  readonly #stop: AbortSignal | undefined
  readonly #refusal: (() => Error) | undefined
  readonly #headed: boolean
  #batch = ''
  #wanted = false
  #pumping = false
  #ended = false
  #stopping = false
  #closed = false
  #flushTimer: NodeJS.Immediate | undefined
  readonly #onStop = () => {
    this.#stopping = true
    if (!this.#pumping) this.#endEarly()
  }

  constructor (reply: Pick<FastifyReply, 'log' | 'raw'>, source: PullSource, { log, stop, head, refusal }: PullOptions) {
    super({ highWaterMark: CHUNK_SIZE })
    this.#reply = reply
    this.#source = source
    this.#log = log
    this.#stop = stop
    this.#refusal = refusal
    this.#headed = head !== undefined
    if (head !== undefined) this.push(head)
    if (stop?.aborted === true) this.#stopping = true
    else stop?.addEventListener('abort', this.#onStop, { once: true })
  }

  override _read (): void {
    this.#wanted = true
    if (!this.#pumping && !this.#ended) this.#pump() // never rejects: failures go to #fail
  }

  async #pump (): Promise<void> {
    this.#pumping = true
    try {
      while (this.#wanted && !this.destroyed) {
        if (this.#stopping) {
          this.#endEarly()
          return
        }
        let piece = this.#source.next()
        if (typeof piece === 'object') {
          // The source makes us wait: if it is still waiting once the event loop turns, send what we have.
          if (this.#batch !== '') this.#flushTimer ??= setImmediate(() => this.#flush())
          piece = await piece
          if (this.destroyed) return
        }
        if (piece !== undefined) this.#batch += piece
        if (piece === undefined || this.#source.done === true) {
          this.#ended = true
          this.#flush()
          this.push(null)
          return
        }
        if (this.#batch.length >= CHUNK_SIZE) {
          this.#flush()
          // Also when the client reads as fast as we write: the stream would otherwise call _read
          // again from process.nextTick, chunk after chunk, and never let the event loop accept or read.
          await nextTurn()
        }
      }
    } catch (err) {
      this.#fail(err as Error)
    } finally {
      this.#pumping = false
    }
  }

  /** Whether the status is sent, or as good as: the body can no longer be answered otherwise. */
  get #committed (): boolean {
    return this.#headed || this.#source.items > 0
  }

  /** The stop has come: the source is closed and the body cut after what was produced. */
  #endEarly (): void {
    if (this.#ended || this.destroyed) return
    this.#close()
    if (!this.#committed && this.#refusal !== undefined) {
      // Nothing is sent yet: an answer the client can retry elsewhere, rather than a 200 cut at once.
      this.#ended = true
      this.destroy(this.#refusal())
      return
    }
    this.#reply.log.info({ items: this.#source.items }, this.#log.stopped)
    this.#cut()
  }

  #fail (err: Error): void {
    if (this.destroyed) return
    this.#close()
    if (!this.#committed) {
      // Nothing is sent yet: Fastify turns the error into a proper error response.
      this.#ended = true
      this.destroy(err)
      return
    }
    this.#reply.log.error({ err, items: this.#source.items }, this.#log.failed)
    this.#cut()
  }

  /**
   * Ends the stream after what was produced, and has the response close the connection in place
   * of the body's final chunk once everything before it (a compressor's last block too) is written.
   */
  #cut (): void {
    cutAtEnd(this.#reply.raw)
    this.#ended = true
    this.#flush()
    this.push(null)
  }

  #flush (): void {
    if (this.#flushTimer !== undefined) {
      clearImmediate(this.#flushTimer)
      this.#flushTimer = undefined
    }
    if (this.#batch === '' || this.destroyed) return
    const chunk = this.#batch
    this.#batch = ''
    this.#wanted = this.push(chunk)
  }

  /** Stops pulling: the source releases what it holds. */
  #close (): void {
    if (this.#closed) return
    this.#closed = true
    try {
      const closed = this.#source.close()
      if (isThenable(closed)) closed.then(undefined, (err: unknown) => this.#reply.log.warn({ err }, this.#log.closeFailed))
    } catch (err) {
      this.#reply.log.warn({ err }, this.#log.closeFailed)
    }
  }

  override _destroy (err: Error | null, callback: (error?: Error | null) => void): void {
    this.#stop?.removeEventListener('abort', this.#onStop)
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer)
    if (!this.#ended) {
      this.#ended = true
      this.#reply.log.info({ items: this.#source.items }, this.#log.left)
    }
    this.#close()
    callback(err)
  }
}
