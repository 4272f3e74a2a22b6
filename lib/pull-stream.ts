import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyReply } from 'fastify'
import { cutAtEnd } from './lingering-close.js'

/** A streamed body is written in chunks of about this many characters (and its stream buffers one). */
export const CHUNK_SIZE = 64 * 1024

/**
 * The bytes of a response that Node may hold for its socket (those the kernel has not taken yet)
 * below which a streamed body produces its next chunk: the socket's own high-water mark, Node 24's
 * default for a stream (`writableNeedDrain` turns true at it, and 'drain' comes when it empties).
 * So Node holds less than this and one chunk of a stream its client does not read; the kernel's
 * send buffer comes on top (docs/operations.md, "Limits").
 */
export const SOCKET_AHEAD = 64 * 1024

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
  /** Called once when the stream is over, whatever ended it: gives back its client's stream slot (lib/stream-slots.ts). */
  release?: () => void
}

/**
 * A streamed body: a readable stream that pulls the pieces of the body from a source only when
 * its consumer (the response, through pipe) wants more bytes, so that a slow client slows the
 * source rather than the service buffering the body.
 *
 * - Pieces are gathered into chunks of CHUNK_SIZE; a chunk is sent early when the source makes us
 *   wait (so pieces are written as they are produced), and the event loop gets a turn between
 *   chunks, so that other requests are served meanwhile.
 * - A chunk is begun only while the response's socket wants more (`writableNeedDrain` false: Node
 *   holds less than SOCKET_AHEAD of it that the kernel has not taken), else once it drains: the
 *   stream's own buffer and the pipe's would otherwise let a chunk more be produced for a client
 *   that reads nothing, and the compressor between them more again.
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
  readonly #release: (() => void) | undefined
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

  /** The socket has drained: the chunk it held back is produced, if the stream still wants it. */
  readonly #onDrain = () => {
    this.#waiting = undefined
    if (this.#wanted && !this.#pumping && !this.#ended) this.#pump()
  }

  /** The socket whose drain the stream waits for, while it waits. */
  #waiting: Pick<NodeJS.WritableStream, 'removeListener'> | undefined

  constructor (reply: Pick<FastifyReply, 'log' | 'raw'>, source: PullSource, { log, stop, head, refusal, release }: PullOptions) {
    super({ highWaterMark: CHUNK_SIZE })
    this.#release = release
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
        if (this.#batch === '' && this.#socketFull()) return
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

  /**
   * Whether the response's socket holds as much as it takes (SOCKET_AHEAD) the kernel has not
   * taken: then the stream waits for its drain. (A response without a socket yet, queued behind
   * another on its connection, or made in process, is never full.)
   */
  #socketFull (): boolean {
    const socket = this.#reply.raw.socket
    if (socket?.writableNeedDrain !== true) return false
    if (this.#waiting === undefined) {
      socket.once('drain', this.#onDrain)
      this.#waiting = socket
    }
    return true
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
    this.#waiting?.removeListener('drain', this.#onDrain)
    this.#release?.()
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer)
    if (!this.#ended) {
      this.#ended = true
      this.#reply.log.info({ items: this.#source.items }, this.#log.left)
    }
    this.#close()
    callback(err)
  }
}
