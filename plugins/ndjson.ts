import { Readable } from 'node:stream'
import createError from '@fastify/error'
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import { RETRY_AFTER_SECONDS, exposed } from '../lib/errors.js'
import { cutAtEnd } from '../lib/lingering-close.js'

/** Anything that yields items, one at a time: an array, a generator, an async generator, a cursor… */
export type ItemSource<T> = Iterable<T> | AsyncIterable<T>

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends `source` as NDJSON: each item written by a serializer compiled once from `itemSchema`,
     * one compact JSON value and `\n` per item, in chunks, pulled only as fast as the client reads.
     * The Content-Type is the one the route negotiated. Returns the reply.
     */
    ndjson<S extends TSchema> (source: ItemSource<Static<S>>, itemSchema: S): FastifyReply
  }
}

export const ShuttingDown = createError('FST_ERR_SHUTTING_DOWN', 'The service is shutting down: the stream did not start', 503)

/** Lines are gathered into chunks of about this many characters (and the stream buffers one such chunk). */
export const CHUNK_SIZE = 64 * 1024

type Serialize = (item: unknown) => string
type Step = IteratorResult<unknown>

const isThenable = (value: unknown): value is PromiseLike<Step> =>
  typeof (value as PromiseLike<Step> | null)?.then === 'function'

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * The body of an NDJSON response: a readable stream that pulls items from an iterator only when
 * its consumer (the response, through pipe) wants more bytes, and serialises them into lines.
 *
 * - Lines are batched into chunks of CHUNK_SIZE; a batch is sent early when the source makes us
 *   wait (so items are written as they are produced), and the event loop gets a turn between chunks.
 * - Destroyed (the client went away): the iterator's `return()` is called; nothing more is pulled.
 * - Cut short, by the service shutting down (`fastify.drainEnded`: no more items are pulled) or
 *   by the source (or the serializer) failing: the source is closed and never pulled again. Once
 *   an item has been produced the 200 is committed: the lines produced so far are delivered, then
 *   the connection is closed without the final chunk of the body (lib/lingering-close.ts,
 *   `cutAtEnd`), so that the client, or a proxy, sees the body is incomplete rather than taking
 *   it for the whole. Before the first item, Fastify answers with an error response instead: the
 *   source's error (its statusCode, else 500), or 503 with Retry-After when shutting down.
 */
class NdjsonStream extends Readable {
  readonly #reply: FastifyReply
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>
  readonly #serialize: Serialize
  #batch = ''
  #produced = 0
  #wanted = false
  #pumping = false
  #finished = false
  #failed = false
  #sourceClosed = false
  #stopping = false
  #flushTimer: NodeJS.Immediate | undefined
  readonly #drainEnded: AbortSignal
  readonly #onDrainEnded = () => {
    this.#stopping = true
    if (!this.#pumping) this.#endEarly()
  }

  constructor (reply: FastifyReply, source: ItemSource<unknown>, serialize: Serialize) {
    super({ highWaterMark: CHUNK_SIZE })
    this.#reply = reply
    this.#iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    this.#serialize = serialize
    this.#drainEnded = reply.server.drainEnded
    if (this.#drainEnded.aborted) this.#stopping = true
    else this.#drainEnded.addEventListener('abort', this.#onDrainEnded, { once: true })
  }

  override _read (): void {
    this.#wanted = true
    if (!this.#pumping && !this.#failed) this.#pump() // never rejects: failures go to #fail
  }

  async #pump (): Promise<void> {
    this.#pumping = true
    try {
      while (this.#wanted && !this.destroyed) {
        if (this.#stopping) {
          this.#endEarly()
          return
        }
        let step = this.#iterator.next()
        if (isThenable(step)) {
          // The source makes us wait: if it is still waiting once the event loop turns, send what we have.
          if (this.#batch !== '') this.#flushTimer ??= setImmediate(() => this.#flush())
          step = await step
          if (this.destroyed) return
        }
        if (step.done === true) {
          this.#finished = true
          this.#flush()
          this.push(null)
          return
        }
        this.#produced++
        this.#batch += this.#serialize(step.value) + '\n'
        if (this.#batch.length >= CHUNK_SIZE) {
          this.#flush()
          // Let other requests and the socket's events in between chunks, also when the client
          // reads as fast as we write: the stream would otherwise call _read again from
          // process.nextTick, chunk after chunk, and never let the event loop accept or read.
          await nextTurn()
        }
      }
    } catch (err) {
      this.#fail(err as Error)
    } finally {
      this.#pumping = false
    }
  }

  /** The service is shutting down: the source is closed and the response cut after the lines produced so far. */
  #endEarly (): void {
    if (this.#finished || this.destroyed) return
    this.#closeSource()
    if (this.#produced === 0) {
      // Nothing is sent yet: an answer the client can retry elsewhere, rather than a 200 cut at once.
      this.destroy(exposed(new ShuttingDown(), { 'retry-after': String(RETRY_AFTER_SECONDS) }))
      return
    }
    this.#reply.log.info({ items: this.#produced }, 'ndjson stream ended early: the service is shutting down')
    this.#cut()
  }

  /**
   * Ends the stream after the lines produced so far, and has the response close the connection in
   * place of the body's final chunk once everything before it (a compressor's last block too) is written.
   */
  #cut (): void {
    cutAtEnd(this.#reply.raw)
    this.#finished = true
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

  #fail (err: Error): void {
    if (this.destroyed) return
    this.#failed = true
    this.#closeSource()
    if (this.#produced === 0) {
      // Nothing is sent yet: Fastify turns the error into a proper error response.
      this.destroy(err)
      return
    }
    this.#reply.log.error({ err, items: this.#produced }, 'ndjson source failed: the response is cut short')
    this.#cut()
  }

  /** Stops pulling: the source's `return()` lets it release what it holds (finally blocks run). */
  #closeSource (): void {
    if (this.#sourceClosed || this.#finished) return
    this.#sourceClosed = true
    try {
      const closed = this.#iterator.return?.()
      if (isThenable(closed)) {
        closed.then(undefined, (err: unknown) => this.#reply.log.warn({ err }, 'ndjson source failed to close'))
      }
    } catch (err) {
      this.#reply.log.warn({ err }, 'ndjson source failed to close')
    }
  }

  override _destroy (err: Error | null, callback: (error?: Error | null) => void): void {
    this.#drainEnded.removeEventListener('abort', this.#onDrainEnded)
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer)
    if (!this.#finished && !this.#sourceClosed) {
      this.#reply.log.info({ items: this.#produced }, 'ndjson stream stopped early: the connection closed')
    }
    this.#closeSource()
    callback(err)
  }
}

/**
 * NDJSON responses from any sync or async source: `return reply.ndjson(source, ItemSchema)`.
 * Backpressure, batching, disconnects and source errors are handled here, once (see NdjsonStream).
 * A HEAD request gets the headers only: nothing is pulled from the source.
 */
export default fp(async function ndjson (fastify) {
  fastify.decorateReply('ndjson', function ndjson<S extends TSchema> (this: FastifyReply, source: ItemSource<Static<S>>, itemSchema: S) {
    if (this.request.method === 'HEAD') return this.send(Readable.from([]))
    // Compiled once per route and schema (Fastify caches it in the route's context).
    const serialize = this.compileSerializationSchema(itemSchema) as Serialize
    // nginx (and proxies that honour it) pass the lines on as they come instead of buffering them.
    this.header('x-accel-buffering', 'no')
    return this.send(new NdjsonStream(this, source, serialize))
  })
}, { name: 'ndjson', dependencies: ['shutdown'] })
