import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { CHUNK_SIZE, PullStream, type PullLog, type PullSource } from './pull-stream.js'
import { StoredJson, type Listed, type Listing } from './repository.js'

/**
 * How a list is written in one media type: what opens and closes it, what goes between two items,
 * and one item. The body is `open`, the items joined by `separator`, then `close`, the same bytes
 * whether it is sent whole or in chunks. `json`: an item's stored JSON (StoredJson) is what `item`
 * writes for it, and is written as it is. `whole`, when given, writes a whole body of items at once.
 */
export interface ListEncoding<T> {
  open: string
  separator: string
  close: string
  item: (item: T) => string
  json?: boolean
  whole?: (items: readonly T[]) => string
}

/** A body shorter than this (in characters) is sent whole, with its Content-Length, as any other JSON answer is. */
export const WHOLE_BODY = 64 * 1024

/** One entry of a listing in an encoding: its stored JSON as it is when the encoding is JSON's. */
function encode<T> (entry: Listed<T>, { item, json = false }: ListEncoding<T>): string {
  return entry instanceof StoredJson ? (json ? entry.text : item(JSON.parse(entry.text) as T)) : item(entry)
}

const isStoredJson = (entry: unknown): boolean => entry instanceof StoredJson

/** The body of a short list, all of whose items are at hand. */
export function wholeBody<T> (items: ReadonlyArray<Listed<T>>, encoding: ListEncoding<T>): string {
  if (encoding.whole !== undefined && !items.some(isStoredJson)) return encoding.whole(items as readonly T[])
  let text = encoding.open
  for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : encoding.separator) + encode(items[i] as Listed<T>, encoding)
  return text + encoding.close
}

/**
 * Writes a listing in an encoding, a chunk at a time: only the piece being written and the chunk
 * are in memory, whatever the size of the list.
 */
export class ListEncoder<T> {
  readonly #listing: Listing<T>
  readonly #iterator: AsyncIterator<ReadonlyArray<Listed<T>>>
  readonly #encoding: ListEncoding<T>
  #piece: ReadonlyArray<Listed<T>> = []
  #index = 0
  #written = 0
  #opened = false
  #done = false

  constructor (listing: Listing<T>, encoding: ListEncoding<T>) {
    this.#listing = listing
    this.#iterator = listing[Symbol.asyncIterator]()
    this.#encoding = encoding
  }

  /** The whole list has been written. */
  get done (): boolean {
    return this.#done
  }

  /** How many items have been written. */
  get written (): number {
    return this.#written
  }

  /** The next `size` characters of the body or a little more (an item is not split); the end of it, shorter, once the list is done. */
  async chunk (size: number): Promise<string> {
    if (this.#done) return ''
    let text = ''
    if (!this.#opened) {
      this.#opened = true
      text = this.#encoding.open
    }
    const { separator } = this.#encoding
    while (text.length < size) {
      if (this.#index === this.#piece.length) {
        const step = await this.#iterator.next()
        if (step.done === true) {
          this.#done = true
          return text + this.#encoding.close
        }
        this.#piece = step.value
        this.#index = 0
        continue
      }
      const next = encode(this.#piece[this.#index++] as Listed<T>, this.#encoding)
      text += this.#written++ === 0 ? next : separator + next
    }
    return text
  }

  /** Stops: the listing releases what it holds. */
  close (): Promise<void> {
    return this.#listing.close()
  }
}

const LIST_LOG: PullLog = {
  stopped: 'list cut short: the service is shutting down',
  failed: 'list failed: the response is cut short',
  left: 'list stopped early: the connection closed',
  closeFailed: 'a list failed to close'
}

/**
 * The body of a long list, after its first chunk (`head`): the next chunk is written only when the
 * response wants more (lib/pull-stream.ts), so that a slow client slows the reading of the store
 * instead of the service buffering the list.
 *
 * - The client goes away (destroyed): the listing is closed, nothing more is read.
 * - The store fails, or the service's drain ends (`drainEnded`): the status and the first chunk
 *   are sent, so the list cannot be answered otherwise. What was written is delivered, then the
 *   connection is closed without the body's last chunk, so that the client sees a cut body rather
 *   than taking it for the whole; a failure is logged.
 */
export class ListBody<T> extends PullStream {
  constructor (reply: FastifyReply, encoder: ListEncoder<T>, head: string, drainEnded?: AbortSignal, release?: () => void) {
    const chunks: PullSource = {
      next: () => encoder.chunk(CHUNK_SIZE),
      get done () { return encoder.done },
      get items () { return encoder.written },
      close: () => encoder.close()
    }
    super(reply, chunks, { log: LIST_LOG, stop: drainEnded, head, release })
  }
}

/** A body written whole: a string, which the serializer the route negotiated must leave as it is. */
function sendWhole (reply: FastifyReply, body: string): FastifyReply {
  return reply.serializer(String).send(body)
}

/** How a long list is tied to the service: the stop that cuts it, and the slot its client's address takes (lib/stream-slots.ts). */
export interface StreamTies {
  drainEnded?: AbortSignal
  /** Takes a stream slot for the request's client, or throws the refusal; returns what gives it back. */
  takeSlot?: () => () => void
}

/**
 * Sends a listing in an encoding: whole when its body is shorter than WHOLE_BODY (with its
 * Content-Length), else as a ListBody, which takes a stream slot (`ties.takeSlot`). A short listing's items are written at once,
 * and sent then and there: undefined, no promise, so that a handler can answer without one. A
 * HEAD request of a long list gets the headers only: nothing more is read. A failure before the
 * body starts is thrown (rejected), for the error handler to answer (a 503 when the database is
 * unavailable, a 429 when the client has as many streams open as it may).
 */
export function sendList<T> (reply: FastifyReply, listing: Listing<T>, encoding: ListEncoding<T>, ties: StreamTies = {}): Promise<void> | undefined {
  if (listing.items !== undefined) {
    const body = wholeBody(listing.items, encoding)
    // (Such a listing holds nothing to release.)
    if (body.length < WHOLE_BODY) {
      sendWhole(reply, body)
      return undefined
    }
  }
  return sendLong(reply, listing, encoding, ties)
}

/** sendList of a listing that may be long: its first WHOLE_BODY characters tell. Settles when the response has ended (it adopts the reply's own `then`). */
async function sendLong<T> (reply: FastifyReply, listing: Listing<T>, encoding: ListEncoding<T>, { drainEnded, takeSlot }: StreamTies): Promise<void> {
  const encoder = new ListEncoder(listing, encoding)
  let head: string
  try {
    head = await encoder.chunk(WHOLE_BODY)
  } catch (err) {
    await encoder.close()
    throw err
  }
  if (encoder.done) {
    await encoder.close()
    return sendWhole(reply, head)
  }
  if (reply.request.method === 'HEAD') {
    await encoder.close()
    return reply.send(Readable.from([]))
  }
  let release: (() => void) | undefined
  try {
    release = takeSlot?.()
  } catch (err) {
    await encoder.close()
    throw err
  }
  return reply.send(new ListBody(reply, encoder, head, drainEnded, release))
}
