import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import zlib from 'node:zlib'
import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import createError from '@fastify/error'
import type { FastifyInstance } from 'fastify'
import { ListEncoder, WHOLE_BODY, sendList, wholeBody, type ListEncoding } from '../../lib/list-body.js'
import { CHUNK_SIZE } from '../../lib/pull-stream.js'
import { exposed } from '../../lib/errors.js'
import { StoredJson, type Listing } from '../../lib/repository.js'
import { assertError, baseUrl, buildPlugins, logSink, openStream, until } from '../helpers/index.js'

interface Item { n: number, label: string }
const PAD = 'x'.repeat(90)
const Items = Type.Array(Type.Object({ n: Type.Integer(), label: Type.String() }))

/** A listing whose reading and closing can be watched: `pulled` counts the pieces it handed out; it fails at piece `failAt`. */
function watched (pieces: Iterable<readonly Item[]>, { failAt = -1, total = 0 } = {}) {
  const state = { pulled: 0, closed: false }
  const listing: Listing<Item> = {
    total,
    full: false,
    async * [Symbol.asyncIterator] () {
      for (const piece of pieces) {
        if (state.closed) return
        if (state.pulled === failAt) throw new Error('the store failed')
        state.pulled++
        yield piece
      }
    },
    async close () { state.closed = true }
  }
  return { state, listing }
}

/** `count` items in pieces of `size`. */
function * itemsOf (count: number, size = 100): Generator<Item[]> {
  for (let n = 0; n < count; n += size) yield Array.from({ length: Math.min(size, count - n) }, (_, i) => ({ n: n + i, label: PAD }))
}

function * forever (): Generator<Item[]> {
  for (let n = 0; ; n += 100) yield Array.from({ length: 100 }, (_, i) => ({ n: n + i, label: PAD }))
}

const JSON_ARRAY: ListEncoding<Item> = { open: '[', separator: ',', close: ']', item: (item) => JSON.stringify(item) }
const reference = (count: number) => JSON.stringify([...itemsOf(count)].flat())

/** The listing of the latest request to the routes below, and the drain signal they are given. */
let current = watched([])
let drain = new AbortController()
/** The latest streamed response, to see whether it waits for the client. */
let response: ServerResponse | undefined

function routes (server: FastifyInstance) {
  const query = { querystring: Type.Object({ count: Type.Integer({ default: 3 }), failAt: Type.Integer({ default: -1 }) }) }
  const schema = { ...query, produces: ['application/json'], response: { 200: Items } }
  server.get('/list', { schema }, async (request, reply) => {
    const { count, failAt } = request.query as { count: number, failAt: number }
    current = watched(itemsOf(count), { failAt })
    response = reply.raw
    return sendList(reply, current.listing, JSON_ARRAY, { drainEnded: drain.signal })
  })
  server.get('/forever', { schema }, async (request, reply) => {
    current = watched(forever())
    response = reply.raw
    return sendList(reply, current.listing, JSON_ARRAY, { drainEnded: drain.signal })
  })
  server.get('/unavailable', { schema }, async (request, reply) => {
    current = watched(itemsOf(10), { failAt: 0 })
    current.listing[Symbol.asyncIterator] = async function * () {
      throw exposed(new (createError('API_ERR_STORE_UNAVAILABLE', 'The database is unavailable: retry later', 503))(), { 'retry-after': '5' })
    }
    return sendList(reply, current.listing, JSON_ARRAY)
  })
  // A stream slot that can be watched, or refused (lib/stream-slots.ts).
  server.get('/slotted', { schema }, async (request, reply) => {
    const { count } = request.query as { count: number }
    current = watched(itemsOf(count))
    return sendList(reply, current.listing, JSON_ARRAY, {
      takeSlot: () => {
        if (slots.refuse) throw exposed(new (createError('API_ERR_TOO_MANY_STREAMS', 'Too many streams', 429))(), { 'retry-after': '5' })
        slots.taken++
        return () => { slots.given++ }
      }
    })
  })
  server.get('/ping', async () => 'pong')
}

/** The slots /slotted took and gave back, and whether it is refused one. */
const slots = { taken: 0, given: 0, refuse: false }

async function listen (t: Test, logs?: ReturnType<typeof logSink>) {
  drain = new AbortController()
  const app = await buildPlugins(t, routes, {}, logs === undefined ? {} : { logger: logs.logger })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: baseUrl(app) }
}

/** The whole body of a response, and whether it ended properly (`complete`) or was cut; `received` grows as it comes. */
function readAll (res: IncomingMessage, progress: { received: number } = { received: 0 }): Promise<{ body: string, complete: boolean }> {
  return new Promise((resolve) => {
    let body = ''
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => {
      body += chunk
      progress.received = body.length
    })
    res.on('error', () => {})
    res.on('close', () => resolve({ body, complete: res.complete }))
  })
}

t.test('ListEncoder: open, the items joined, close, in chunks of at least `size` characters, an item never split', async (t) => {
  const encodings: Array<ListEncoding<Item>> = [JSON_ARRAY, { open: '', separator: '', close: '', item: (item) => `${item.n}\n` }, { open: '<', separator: '&', close: '>', item: (item) => `n=${item.n}` }]
  for (const encoding of encodings) {
    for (const [count, size] of [[0, 10], [1, 10], [7, 3], [1000, 1], [1000, 37], [1000, 1000]] as const) {
      const pieces = [...itemsOf(count, size)]
      // Empty pieces on the way change nothing.
      const encoder = new ListEncoder(watched([[], ...pieces.flatMap((piece) => [piece, []])]).listing, encoding)
      const chunks: string[] = []
      while (!encoder.done) chunks.push(await encoder.chunk(500))
      const items = pieces.flat()
      t.equal(chunks.join(''), encoding.open + items.map(encoding.item).join(encoding.separator) + encoding.close, `${count} items in pieces of ${size}`)
      t.ok(chunks.slice(0, -1).every((chunk) => chunk.length >= 500 && chunk.length < 500 + 200), 'chunks of the size asked, but the last')
      t.equal(encoder.written, count, 'every item written')
      t.equal(await encoder.chunk(500), '', 'nothing after the end')
    }
  }
})

t.test('ListEncoder: an item kept as its JSON is written as it is by a JSON encoding, parsed by the others', async (t) => {
  const stored = new StoredJson('{"n":2,"label":"kept as written"}')
  const pieces = [[{ n: 1, label: 'a' }, stored], [{ n: 3, label: 'c' }]] as unknown as Array<readonly Item[]>
  const read = async (encoding: ListEncoding<Item>) => {
    const encoder = new ListEncoder(watched(pieces).listing, encoding)
    return encoder.chunk(1000)
  }
  t.equal(await read({ ...JSON_ARRAY, item: (item) => `{"n":${item.n}}`, json: true }), '[{"n":1},{"n":2,"label":"kept as written"},{"n":3}]', 'JSON: as it is')
  t.equal(await read({ open: '', separator: '', close: '', item: (item) => `${item.n} ${item.label}\n` }), '1 a\n2 kept as written\n3 c\n', 'another encoding: parsed')
})

t.test('ListEncoder: a chunk ends as soon as it reaches the size asked', async (t) => {
  const encoder = new ListEncoder(watched([[...itemsOf(5)].flat()]).listing, { open: '', separator: '', close: '', item: () => 'ab' })
  t.equal(await encoder.chunk(4), 'abab', 'two items make 4 characters: no third')
  t.equal(await encoder.chunk(5), 'ababab', 'three to pass 5: an item is never split')
})

t.test('wholeBody: open, the items joined, close; the encoding\'s `whole` when no item is kept as its JSON', async (t) => {
  const items: Item[] = [{ n: 1, label: 'a' }, { n: 2, label: 'b' }, { n: 3, label: 'c' }]
  t.equal(wholeBody(items, JSON_ARRAY), JSON.stringify(items))
  t.equal(wholeBody(items.slice(0, 1), JSON_ARRAY), JSON.stringify(items.slice(0, 1)))
  t.equal(wholeBody([], JSON_ARRAY), '[]')
  const lines: ListEncoding<Item> = { open: '<', separator: '\n', close: '>', item: (item) => `${item.n}`, whole: (all) => `all ${all.length}` }
  t.equal(wholeBody(items, lines), 'all 3', 'written whole by the encoding')
  t.equal(wholeBody([new StoredJson('{"n":1,"label":"a"}'), ...items.slice(1)], lines), '<1\n2\n3>', 'one kept as its JSON: item by item, parsed')
  t.equal(wholeBody(items, { ...lines, whole: undefined }), '<1\n2\n3>', 'no `whole`: item by item')
})

t.test('sendList: a listing whose items are at hand is answered then and there when short, else streamed', async (t) => {
  const atHand = (items: Item[]): Listing<Item> => ({
    total: items.length,
    full: true,
    items,
    async * [Symbol.asyncIterator] () { yield items },
    async close () {}
  })
  const answers: Array<Promise<void> | undefined> = []
  const app = await buildPlugins(t, (server) => {
    server.get('/at-hand', { schema: { querystring: Type.Object({ count: Type.Integer() }), produces: ['application/json'], response: { 200: Items } } }, (request, reply) => {
      const answer = sendList(reply, atHand([...itemsOf((request.query as { count: number }).count)].flat()), JSON_ARRAY)
      answers.push(answer)
      return answer ?? reply
    })
  })
  const short = await app.inject({ url: '/at-hand?count=3' })
  t.equal(short.body, reference(3))
  t.equal(short.headers['content-length'], String(Buffer.byteLength(reference(3))))
  t.equal(answers[0], undefined, 'sent then and there: no promise')
  const long = await app.inject({ url: '/at-hand?count=1000' })
  t.ok(reference(1000).length >= WHOLE_BODY)
  t.equal(long.body, reference(1000), 'the same bytes')
  t.equal(long.headers['transfer-encoding'], 'chunked', 'too long to be sent whole: streamed')
  t.ok(answers[1] instanceof Promise)
})

t.test('a short list is sent whole, with its Content-Length; a long one in chunks; the same bytes', async (t) => {
  const { app } = await listen(t)
  const short = await app.inject({ url: '/list?count=3' })
  t.equal(short.statusCode, 200)
  t.equal(short.body, reference(3))
  t.equal(short.headers['content-length'], String(Buffer.byteLength(reference(3))), 'Content-Length, as a body sent whole has')
  t.notOk(short.headers['transfer-encoding'])
  t.ok(current.state.closed, 'the listing is closed')
  const empty = await app.inject({ url: '/list?count=0' })
  t.equal(empty.body, '[]')

  const count = 5000
  t.ok(reference(count).length > 4 * WHOLE_BODY, 'longer than a whole body')
  const long = await app.inject({ url: `/list?count=${count}` })
  t.equal(long.statusCode, 200)
  t.equal(long.body, reference(count), 'the same bytes')
  t.equal(long.headers['transfer-encoding'], 'chunked', 'streamed')
  t.notOk(long.headers['content-length'])
  t.equal(long.headers['content-type'], 'application/json; charset=utf-8', 'the negotiated type')
  t.ok(current.state.closed, 'the listing is closed')

  const gzipped = await app.inject({ url: `/list?count=${count}`, headers: { 'accept-encoding': 'gzip' } })
  t.equal(gzipped.headers['content-encoding'], 'gzip')
  t.equal(zlib.gunzipSync(gzipped.rawPayload).toString(), reference(count), 'compressed, the same bytes')
})

t.test('HEAD: a short list has its Content-Length; a long one the headers only, and nothing more is read', async (t) => {
  const { app } = await listen(t)
  const short = await app.inject({ method: 'HEAD', url: '/list?count=3' })
  t.equal(short.statusCode, 200)
  t.equal(short.body, '')
  t.equal(short.headers['content-length'], String(Buffer.byteLength(reference(3))))
  const long = await app.inject({ method: 'HEAD', url: '/list?count=1000000' })
  t.equal(long.statusCode, 200)
  t.equal(long.body, '')
  t.equal(long.headers['content-type'], 'application/json; charset=utf-8')
  t.ok(current.state.pulled * 100 * (PAD.length + 20) < 2 * WHOLE_BODY, `${current.state.pulled} pieces read: the first chunk's`)
  t.ok(current.state.closed, 'the listing is closed')
})

t.test('a failure before the first byte is an error answer; after it, a cut body, logged', async (t) => {
  const sink = logSink()
  const { app, base } = await listen(t, sink)
  const unavailable = await app.inject({ url: '/unavailable' })
  assertError(t, unavailable, 503, 'The database is unavailable')
  t.equal(unavailable.headers['retry-after'], '5')
  t.ok(current.state.closed, 'the listing is closed')
  assertError(t, await app.inject({ url: '/list?count=100&failAt=0' }), 500)
  t.ok(current.state.closed, 'the listing is closed')

  // The failure once the first chunks are sent: the status cannot change any more.
  const res = await openStream(`${base}/list?count=5000&failAt=20`)
  t.equal(res.statusCode, 200)
  const { body, complete } = await readAll(res)
  t.notOk(complete, 'the client sees the body is cut')
  t.ok(body.length >= WHOLE_BODY && reference(5000).startsWith(body), `what was written before the failure is delivered (${body.length} characters)`)
  await until(() => current.state.closed)
  t.pass('the listing is closed')
  const logged = sink.entries.find((entry) => entry.msg === 'list failed: the response is cut short')
  t.match(logged, { level: 50, items: Number, err: { message: 'the store failed' } }, 'the failure is logged, with how far it got')

  const again = await readAll(await openStream(`${base}/list?count=3`))
  t.same(again, { body: reference(3), complete: true }, 'the server answers on')
})

t.test('backpressure: a client that stops reading stops the reading of the listing; it resumes when the client reads', async (t) => {
  const { base } = await listen(t)
  const res = await openStream(`${base}/forever`)
  await new Promise((resolve) => res.once('data', resolve))
  res.pause()
  // The client's and the server's socket buffers fill, then the response waits for a drain: a
  // hundred turns of the event loop without a piece read is a stall, whatever the machine's load
  // (an endless listing read without backpressure would never stall: give up at a million items).
  let quiet = 0
  let seen = -1
  await until(async () => {
    await new Promise((resolve) => setImmediate(resolve))
    if (current.state.pulled !== seen || response?.writableNeedDrain !== true) quiet = 0
    else quiet++
    seen = current.state.pulled
    return quiet >= 100 || seen > 10_000
  }, 20_000)
  const stalled = current.state.pulled
  await sleep(300)
  t.equal(current.state.pulled, stalled, 'reading has stopped')
  // Socket buffers of both sides, the response's and the stream's buffer: a few MB at most.
  t.ok(stalled < 1000, `stalled after ${stalled} pieces of 100 items (an endless listing)`)

  res.resume()
  await until(() => current.state.pulled > stalled + 1000)
  t.pass('reading resumed when the client read again')
  res.socket.destroy()
  await until(() => current.state.closed)
  t.pass('the listing was closed when the client left')
})

t.test('the event loop turns between two chunks of a list, even for a client that reads as fast as it is written', async (t) => {
  const { app } = await listen(t)
  let turns = 0
  let listing = true
  const count = () => {
    turns++
    if (listing) setImmediate(count)
  }
  setImmediate(count)
  // inject's client takes every chunk at once: nothing but the list's own pauses lets other work in.
  const res = await app.inject({ url: '/list?count=50000' })
  listing = false
  const chunks = Math.floor(res.body.length / CHUNK_SIZE)
  t.equal(res.body, reference(50000))
  t.ok(turns >= chunks - 1, `${turns} turns of the event loop while ${chunks} chunks were written`)
  t.equal((await app.inject({ url: '/ping' })).body, 'pong', 'and the service answers on')
})

t.test('the service shutting down (drainEnded): a running list is cut, visibly, its listing closed', async (t) => {
  const sink = logSink()
  const { base } = await listen(t, sink)
  const res = await openStream(`${base}/forever`)
  const progress = { received: 0 }
  const read = readAll(res, progress)
  await until(() => progress.received > 0)
  drain.abort()
  const { body, complete } = await read
  t.notOk(complete, 'the client sees the body is cut')
  t.ok(body.startsWith('[{"n":0,'), 'after what was written')
  await until(() => current.state.closed)
  t.pass('the listing is closed')
  t.ok(sink.entries.some((entry) => entry.msg === 'list cut short: the service is shutting down'), 'logged')

  // A list that starts once the drain is over is cut after its first chunk.
  const late = await readAll(await openStream(`${base}/list?count=5000`))
  t.notOk(late.complete, 'cut')
  t.ok(reference(5000).startsWith(late.body) && late.body.length >= WHOLE_BODY, 'after its first chunk')
  const short = await readAll(await openStream(`${base}/list?count=3`))
  t.same(short, { body: reference(3), complete: true }, 'a short list is whole: it is sent at once')
})

t.test('a client that goes away: the listing is closed and no more read; logged', async (t) => {
  const sink = logSink()
  const { base } = await listen(t, sink)
  const res = await openStream(`${base}/list?count=10000000`)
  await new Promise((resolve) => res.once('data', resolve))
  res.socket.destroy()
  await until(() => current.state.closed)
  const pulled = current.state.pulled
  t.ok(pulled < 10_000, `${pulled} of 100,000 pieces read`)
  await sleep(200)
  t.equal(current.state.pulled, pulled, 'and nothing more since')
  await until(() => sink.entries.some((entry) => entry.msg === 'list stopped early: the connection closed'))
  t.pass('logged')
  t.ok(CHUNK_SIZE <= WHOLE_BODY, 'a streamed list has at least a chunk before its first pause')
})

t.test('a long list takes a stream slot before its status, and gives it back once over; a short one takes none; refused, the listing is closed', async (t) => {
  const app = await buildPlugins(t, routes)
  Object.assign(slots, { taken: 0, given: 0, refuse: false })
  t.equal((await app.inject({ url: '/slotted?count=3' })).statusCode, 200)
  t.same(slots, { taken: 0, given: 0, refuse: false }, 'a short list: no slot')
  const long = await app.inject({ url: '/slotted?count=20000' })
  t.equal(long.body, reference(20000))
  await until(() => slots.given === 1)
  t.same(slots, { taken: 1, given: 1, refuse: false }, 'a long list: one slot, given back once')
  slots.refuse = true
  const refused = await app.inject({ url: '/slotted?count=20000' })
  assertError(t, refused, 429, 'Too many streams')
  t.equal(refused.headers['retry-after'], '5')
  await until(() => current.state.closed)
  t.pass('the listing is closed')
})
