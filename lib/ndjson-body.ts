import type { FastifyReply } from 'fastify'
import { PullStream, isThenable, type PullOptions, type PullLog, type PullSource } from './pull-stream.js'

/** Anything that yields items, one at a time: an array, a generator, an async generator, a cursor… */
export type ItemSource<T> = Iterable<T> | AsyncIterable<T>

/** Writes one item as compact JSON (a serializer compiled from the item's schema). */
export type Serialize = (item: unknown) => string

type Step = IteratorResult<unknown>

/** An item source read as NDJSON: one line per item, its JSON and `\n`. */
class Lines implements PullSource {
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>
  readonly #serialize: Serialize
  #items = 0
  #done = false
  readonly #line = (step: Step): string | undefined => {
    if (step.done === true) {
      this.#done = true
      return undefined
    }
    this.#items++
    return this.#serialize(step.value) + '\n'
  }

  constructor (source: ItemSource<unknown>, serialize: Serialize) {
    this.#iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    this.#serialize = serialize
  }

  get items (): number {
    return this.#items
  }

  next (): string | undefined | PromiseLike<string | undefined> {
    const step = this.#iterator.next()
    return isThenable<Step>(step) ? step.then(this.#line) : this.#line(step)
  }

  /** A source that has not ended is told to stop: its `return()` lets it release what it holds (finally blocks run). */
  close (): unknown {
    return this.#done ? undefined : this.#iterator.return?.()
  }
}

const NDJSON_LOG: PullLog = {
  stopped: 'ndjson stream ended early: the service is shutting down',
  failed: 'ndjson source failed: the response is cut short',
  left: 'ndjson stream stopped early: the connection closed',
  closeFailed: 'ndjson source failed to close'
}

/**
 * The body of an NDJSON response: the items of a source, each written by `serialize` as one line,
 * pulled only as the client reads (lib/pull-stream.ts: chunks, backpressure, a cut at the stop
 * or at a failure of the source or of the serializer, after a whole line). Before the first item,
 * a failure is the source's error (its statusCode, else 500), and the stop the `refusal`.
 */
export class NdjsonBody extends PullStream {
  constructor (reply: FastifyReply, source: ItemSource<unknown>, serialize: Serialize, options: Pick<PullOptions, 'stop' | 'refusal' | 'release'>) {
    super(reply, new Lines(source, serialize), { ...options, log: NDJSON_LOG })
  }
}
