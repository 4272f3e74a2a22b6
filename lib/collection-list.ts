import type { FastifyReply, FastifyRequest } from 'fastify'
import { contentRangeHeader, nextRangeHeader } from './range/grammar.js'
import { ID_FIELD, nextKeyedRange, parseIdRange } from './range/keyed.js'
import { sendList, type ListEncoding, type StreamTies } from './list-body.js'
import type { Listing, Repository } from './repository.js'
import { RangeWithSort } from './error-codes.js'

/** How one item is written in a media type other than JSON, and what goes between two. */
export interface ItemEncoding<T> {
  separator: string
  item: (item: T) => string
}

export interface ListAnswer<T> {
  repository: Repository<T>
  /** A sort key of the repository, from the request. */
  sortBy?: string | undefined
  /** The header that gives the number of items of a whole list (`User-Count`), if any. */
  countHeader?: string
  /** The media types written otherwise than as a JSON array, by media type. */
  encodings?: Readonly<Record<string, ItemEncoding<T>>>
}

/**
 * JSON (and the media types whose bytes are JSON's): the array as the route's response schema
 * writes it, an item at a time. The schema's serializer writes `[item]` as `[` + the item + `]`,
 * so each item's bytes are the ones it writes inside the whole array; an item the store keeps as
 * the item schema's serializer wrote it is those bytes already.
 */
function jsonEncoding<T> (reply: FastifyReply): ListEncoding<T> {
  const serialize = reply.getSerializationFunction(String(reply.statusCode)) ?? JSON.stringify
  let encoding = jsonEncodings.get(serialize)
  if (encoding === undefined) {
    encoding = { open: '[', separator: ',', close: ']', item: (item) => serialize([item]).slice(1, -1), json: true, whole: serialize }
    jsonEncodings.set(serialize, encoding)
  }
  return encoding as ListEncoding<T>
}

/** The JSON encoding of each serializer (a route's, for a status), made once. */
const jsonEncodings = new WeakMap<(payload: unknown) => string, ListEncoding<unknown>>()

/**
 * Answers a collection's list request (docs/contract.md, Collections): without a Range header the
 * whole list, 200, with the count header; with one, the page by id it asks for, 206 with the
 * headers of /colors (docs/contract.md, Pagination by Range). The list is read from one snapshot
 * of the store and sent as lib/list-body.ts does: whole when short, else streamed. A malformed
 * Range, or one with a sort, is a 400 that names the field (`Accept-Ranges`).
 *
 * A short whole list the store has at hand (the memory store) is answered then and there:
 * undefined, no promise (a route handler returns what this returns).
 */
export function answerList<T> (request: FastifyRequest, reply: FastifyReply, answer: ListAnswer<T>): Promise<void> | undefined {
  if (request.headers.range !== undefined) return answerPage(reply, request.headers.range, answer)
  const { repository, sortBy } = answer
  const listing = repository.listing(sortBy === undefined ? {} : { sortBy })
  return listing instanceof Promise ? listing.then((read) => answerWhole(reply, read, answer)) : answerWhole(reply, listing, answer)
}

/** The whole list, 200, with the count header. */
function answerWhole<T> (reply: FastifyReply, listing: Listing<T>, { countHeader, encodings = {} }: ListAnswer<T>): Promise<void> | undefined {
  if (countHeader !== undefined) reply.header(countHeader, listing.total)
  return sendList(reply, listing, encodingOf(reply, encodings), streamTies(reply))
}

/** The page by id a Range asks for, 206. */
async function answerPage<T> (reply: FastifyReply, header: string, { repository, sortBy, encodings = {} }: ListAnswer<T>): Promise<void> {
  reply.header('accept-ranges', ID_FIELD)
  const range = parseIdRange(header)
  if (sortBy !== undefined) throw new RangeWithSort(sortBy)
  const { value, offset, limit, order } = range
  const listing = await repository.listing({ page: value === undefined ? { offset, limit, order } : { start: value as number, offset, limit, order } })
  if (listing.first !== undefined && listing.last !== undefined) {
    reply.header('content-range', contentRangeHeader(ID_FIELD, listing.first, listing.last))
  }
  const next = nextKeyedRange(range, listing)
  if (next !== undefined) reply.header('next-range', nextRangeHeader(next))
  reply.code(206).header('total-count', listing.total)
  return sendList(reply, listing, encodingOf(reply, encodings), streamTies(reply))
}

/** A long list is cut by the drain's end, and holds one of its client's stream slots (plugins/streams.ts). */
function streamTies (reply: FastifyReply): StreamTies {
  const { server, request } = reply
  return { drainEnded: server.drainEnded, takeSlot: () => server.streamSlots.take(request.ip) }
}

/** The encoding of the media type content negotiation chose (JSON's where the route does not negotiate). */
function encodingOf<T> (reply: FastifyReply, encodings: Readonly<Record<string, ItemEncoding<T>>>): ListEncoding<T> {
  const own = reply.negotiated === null ? undefined : encodings[reply.negotiated]
  return own === undefined ? jsonEncoding(reply) : { open: '', close: '', ...own }
}
