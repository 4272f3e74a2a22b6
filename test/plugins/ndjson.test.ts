import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import zlib from 'node:zlib'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { assertError, baseUrl, buildPlugins, logSink, openStream, readBody, readLines, until } from '../helpers/index.js'
import { CHUNK_SIZE, SOCKET_AHEAD } from '../../lib/pull-stream.js'

const Item = Type.Object({ n: Type.Integer(), label: Type.String() })
const PAD = 'x'.repeat(100)

/** A source whose pulls and closing can be watched: `pulled` counts the items it handed out. */
function counted<T> (items: Iterable<T>) {
  const state = { pulled: 0, closed: false }
  const source = (function * () {
    try {
      for (const item of items) {
        state.pulled++
        yield item
      }
    } finally {
      state.closed = true
    }
  })()
  return { state, source }
}

function * range (count: number) {
  for (let n = 1; n <= count; n++) yield { n, label: PAD }
}

function * forever () {
  for (let n = 1; ; n++) yield { n, label: PAD }
}
/** The response of the latest GET /forever: whether it waits for the client (`writableNeedDrain`). */
forever.response = undefined as ServerResponse | undefined

/** The latest source of the routes below, so that a test can look at what was pulled. */
let current = counted<{ n: number, label: string }>([])

/** A gate that an async source waits on. */
let release = () => {}

function routes (server: FastifyInstance) {
  const count = { querystring: Type.Object({ count: Type.Integer({ minimum: 0, default: 3 }) }) }
  server.get('/array', { schema: { produces: ['application/x-ndjson', 'application/json'] } }, async (request, reply) =>
    // Keys out of schema order, an extra key: the schema's serializer writes exactly the schema.
    reply.ndjson([{ label: 'a', n: 1, extra: true }, { label: 'line\nbreak "q"', n: 2 }] as Array<{ n: number, label: string }>, Item))
  server.get('/async', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
    reply.ndjson((async function * () {
      yield { n: 1, label: 'a' }
      await sleep(1)
      yield { n: 2, label: 'line\nbreak "q"' }
    })(), Item))
  server.get('/empty', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) => reply.ndjson([], Item))
  server.get('/count', { schema: { produces: ['application/x-ndjson'], ...count } }, async (request, reply) => {
    current = counted(range((request.query as { count: number }).count))
    return reply.ndjson(current.source, Item)
  })
  server.get('/forever', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) => {
    current = counted(forever())
    forever.response = reply.raw
    return reply.ndjson(current.source, Item)
  })
  server.get('/slow', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
    reply.ndjson((async function * () {
      yield { n: 1, label: 'first' }
      await new Promise<void>((resolve) => { release = resolve })
      yield { n: 2, label: 'second' }
    })(), Item))
  server.get('/fails-first', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
    reply.ndjson((async function * () {
      await sleep(1)
      throw Object.assign(new Error('no such stream'), { statusCode: 404 })
    })(), Item))
  server.get('/crashes-first', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
    reply.ndjson((function * (): Generator<{ n: number, label: string }> {
      throw new Error('database on fire')
    })(), Item))
  server.get('/fails-later', { schema: { produces: ['application/x-ndjson'], ...count } }, async (request, reply) => {
    const { count } = request.query as { count: number }
    current = counted((function * () {
      yield * range(count)
      throw new Error('source broke')
    })())
    return reply.ndjson(current.source, Item)
  })
  // Hand-written iterators whose next() fails after one item and whose return() fails too.
  server.get('/broken-close', { schema: { produces: ['application/x-ndjson'], querystring: Type.Object({ async: Type.Boolean() }) } }, async (request, reply) => {
    const { async } = request.query as { async: boolean }
    let n = 0
    const next = () => {
      if (++n > 1) throw new Error('next broke')
      return { done: false as const, value: { n, label: 'x' } }
    }
    const source = async
      ? { [Symbol.asyncIterator]: () => ({ next: async () => next(), return: async () => { throw new Error('close broke') } }) }
      : { [Symbol.iterator]: () => ({ next, return: (): never => { throw new Error('close broke') } }) }
    return reply.ndjson(source, Item)
  })
  server.get('/bad-item', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) =>
    reply.ndjson([{ n: 1, label: 'ok' }, { n: 2 }] as Array<{ n: number, label: string }>, Item))
}

/** The plugin's routes over a real socket; with `logs`, its log lines go there. */
async function listen (t: Test, logs?: ReturnType<typeof logSink>) {
  const app = await buildPlugins(t, routes, {}, logs === undefined ? {} : { logger: logs.logger })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: baseUrl(app) }
}

t.test('one compact JSON value per item, each followed by \\n, written by the schema', async (t) => {
  const app = await buildPlugins(t, routes)
  const expected = '{"n":1,"label":"a"}\n{"n":2,"label":"line\\nbreak \\"q\\""}\n'
  for (const url of ['/array', '/async']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], 'application/x-ndjson', `${url}: the negotiated type`)
    t.equal(res.body, expected, `${url}: schema key order, no extra key, escaped newline, LF only`)
    t.notOk(res.headers['content-length'], `${url}: streamed, no Content-Length`)
  }
  const empty = await app.inject({ url: '/empty' })
  t.equal(empty.statusCode, 200)
  t.equal(empty.body, '', 'an empty source is an empty body')
})

t.test('the Content-Type is the one the route negotiated', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ url: '/array', headers: { accept: 'application/json' } })
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '{"n":1,"label":"a"}\n{"n":2,"label":"line\\nbreak \\"q\\""}\n', 'the same bytes')
  assertError(t, await app.inject({ url: '/array', headers: { accept: 'text/html' } }), 406)
})

t.test('lines are sent in chunks, not one write per item', async (t) => {
  const app = await buildPlugins(t, routes)
  const res = await app.inject({ url: '/count?count=20000', payloadAsStream: true })
  let writes = 0
  let bytes = 0
  for await (const chunk of res.stream()) {
    writes++
    bytes += (chunk as Buffer).length
  }
  let expected = 0
  for (const item of range(20000)) expected += JSON.stringify(item).length + 1
  t.equal(bytes, expected, 'every line arrived')
  t.ok(writes <= Math.ceil(bytes / CHUNK_SIZE) + 1, `${writes} writes for ${bytes} bytes`)
})

t.test('items are written as they are produced: a slow source does not hold back earlier lines', async (t) => {
  const app = await buildPlugins(t, routes)
  const chunks: string[] = []
  let ended = false
  const request = app.inject({ url: '/slow', payloadAsStream: true }).then((res) => {
    const body = res.stream()
    body.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
    body.on('end', () => { ended = true })
  })
  // Were the first line held back until the source ends, it would not come: fail then, in 10 s.
  await until(() => chunks.length > 0).catch(() => {})
  t.same(chunks, ['{"n":1,"label":"first"}\n'], 'the first line arrives while the source is still waiting')
  release()
  await request
  await until(() => ended)
  t.equal(chunks.join(''), '{"n":1,"label":"first"}\n{"n":2,"label":"second"}\n')
})

t.test('HEAD: headers only, nothing is pulled from the source', async (t) => {
  const app = await buildPlugins(t, routes)
  current = counted([])
  const res = await app.inject({ method: 'HEAD', url: '/count?count=10000000' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/x-ndjson')
  t.equal(res.body, '')
  t.equal(current.state.pulled, 0, 'not one item produced')
  const bad = await app.inject({ method: 'HEAD', url: '/count?count=x' })
  t.equal(bad.statusCode, 400, 'a bad query is still refused')
  t.equal(bad.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('a source that fails before its first item gets a proper error response', async (t) => {
  const app = await buildPlugins(t, routes)
  assertError(t, await app.inject({ url: '/fails-first' }), 404, 'no such stream')
  const res = await app.inject({ url: '/crashes-first' })
  assertError(t, res, 500)
  t.notMatch(res.body, /database on fire/, 'a 5xx does not reveal its message')
})

t.test('a source that fails later: the lines produced are delivered, then the body is cut and the error logged', async (t) => {
  const sink = logSink()
  const logs = sink.entries
  const { base } = await listen(t, sink)
  for (const count of [2, 3000]) {
    const res = await openStream(`${base}/fails-later?count=${count}`)
    t.equal(res.statusCode, 200, 'the status was already sent')
    const { body, complete } = await readBody(res)
    t.equal(body.split('\n').length - 1, count, `all ${count} lines arrived`)
    t.ok(body.endsWith(`{"n":${count},"label":"${PAD}"}\n`), 'the last line is whole')
    t.equal(complete, false, 'the response is visibly incomplete (no final chunk)')
    await until(() => current.state.closed)
    const logged = logs.filter((entry) => entry.msg === 'ndjson source failed: the response is cut short' && entry.items === count)
    t.equal(logged.length, 1, 'the failure is logged once, with the number of items')
    t.equal((logged[0]?.err as { message?: string })?.message, 'source broke')
  }

  const bad = await readBody(await openStream(`${base}/bad-item`))
  t.equal(bad.body, '{"n":1,"label":"ok"}\n', 'an item the schema cannot write stops the stream like a source error')
  t.equal(bad.complete, false)

  const after = await readBody(await openStream(`${base}/count?count=2`))
  t.equal(after.complete, true, 'the server still answers')
  t.equal(after.body.split('\n').length - 1, 2)
})

t.test('in-process (inject) a cut body is a failed response; a source whose return() fails is logged', async (t) => {
  const sink = logSink()
  const logs = sink.entries
  const app = await buildPlugins(t, routes, {}, { logger: sink.logger })
  await t.rejects(app.inject({ url: '/fails-later?count=2' }), { message: /destroyed before completion/ }, 'not a complete response')
  for (const async of [false, true]) {
    await t.rejects(app.inject({ url: `/broken-close?async=${async}` }), `async=${async}`)
    await until(() => logs.filter((entry) => entry.msg === 'ndjson source failed to close').length === (async ? 2 : 1))
    t.pass(`async=${async}: the failed close is logged`)
  }
  t.same(logs.filter((entry) => entry.msg === 'ndjson source failed to close').map((entry) => (entry.err as { message: string }).message),
    ['close broke', 'close broke'])
})

t.test('a client that goes away stops production: count=10000000, a few lines, socket destroyed', async (t) => {
  const sink = logSink()
  const logs = sink.entries
  const { base } = await listen(t, sink)
  const res = await openStream(`${base}/count?count=10000000`)
  t.equal(res.statusCode, 200)
  const lines = await readLines(res, 5)
  t.same(lines.slice(0, 5).map((line) => JSON.parse(line).n), [1, 2, 3, 4, 5], 'the first lines')
  res.socket.destroy()

  await until(() => current.state.closed)
  t.pass('the source was closed (its finally block ran)')
  const pulled = current.state.pulled
  t.ok(pulled < 100_000, `pulled ${pulled} of 10,000,000 items`)
  await sleep(200)
  t.equal(current.state.pulled, pulled, 'and nothing more since')
  await until(() => logs.some((entry) => entry.msg === 'ndjson stream stopped early: the connection closed'))
  t.equal(logs.find((entry) => entry.msg === 'ndjson stream stopped early: the connection closed')?.items, pulled,
    'the log says how far it got')

  const again = await readBody(await openStream(`${base}/count?count=3`))
  t.same(again, { body: `{"n":1,"label":"${PAD}"}\n{"n":2,"label":"${PAD}"}\n{"n":3,"label":"${PAD}"}\n`, complete: true },
    'the server still answers')
})

t.test('backpressure: a client that stops reading stops the pulling; reading again resumes it', async (t) => {
  const { base } = await listen(t)
  const res = await openStream(`${base}/forever`)
  await readLines(res, 1)
  // res is paused: the client stops reading its socket once its buffers are full, and the server's
  // response waits for a drain. Then the source is pulled only to fill the stream's own buffer, one
  // chunk per turn of the event loop: 100 turns without a pull is a stall, whatever the machine's
  // load (an endless source without backpressure would never stall: give up at a million).
  let quiet = 0
  let seen = -1
  await until(async () => {
    await new Promise((resolve) => setImmediate(resolve))
    if (current.state.pulled !== seen || forever.response?.writableNeedDrain !== true) quiet = 0
    else quiet++
    seen = current.state.pulled
    return quiet >= 100 || seen > 1_000_000
  }, 20_000)
  const stalled = current.state.pulled
  await sleep(300)
  t.equal(current.state.pulled, stalled, 'pulling has stopped')
  // Socket buffers of both sides, the response's and the stream's buffer: a few MB at most.
  t.ok(stalled < 100_000, `stalled after ${stalled} items (an endless source)`)
  // Of which Node holds what the kernel has not taken: less than SOCKET_AHEAD, and the chunk produced then.
  const socket = forever.response?.socket
  t.equal(socket?.writableHighWaterMark, SOCKET_AHEAD, 'the socket wants more below SOCKET_AHEAD')
  t.ok(socket!.writableLength < SOCKET_AHEAD + CHUNK_SIZE + 200, `Node holds ${socket?.writableLength} bytes of it`)

  res.resume()
  await until(() => current.state.pulled > stalled + 100_000)
  t.pass('pulling resumed when the client read again')
  res.socket.destroy()
  await until(() => current.state.closed)
  t.pass('and the endless source was closed when the client left')
})

t.test('the service shutting down: a running stream is cut after a whole line, visibly incomplete, its source closed', async (t) => {
  for (const reading of [true, false]) {
    const logs = logSink()
    const app = await buildPlugins(t, routes, { SHUTDOWN_DRAIN: '50' }, { logger: logs.logger })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const res = await openStream(`${baseUrl(app)}/forever`)
    t.equal(res.headers['x-accel-buffering'], 'no', 'proxies are asked not to buffer')
    await readLines(res, 3)
    if (reading) res.resume()
    const closed = app.close()
    // A client that is not reading (the stream waits for it) gets the rest once it reads again.
    if (!reading) setTimeout(() => res.resume(), 200)
    const { body, complete } = await readBody(res)
    await closed
    const client = reading ? 'reading client' : 'paused client'
    t.equal(complete, false, `${client}: the body is incomplete (the chunked body has no final chunk)`)
    t.ok(body.endsWith('\n'), `${client}: it ends at a line boundary`)
    // (The first line may be the end of one readLines left.)
    t.equal(body.split('\n').slice(1, -1).filter((line) => JSON.parse(line).label !== PAD).length, 0, `${client}: whole lines`)
    t.ok(current.state.closed, `${client}: the source is closed`)
    t.match(logs.entries.find((entry) => entry.msg === 'ndjson stream ended early: the service is shutting down'), { items: Number })
  }
})

/** The raw bytes of an HTTP/1.1 answer read off a socket until the server ends it: its head, and its chunked body undone. */
async function rawGet (app: FastifyInstance, path: string, headers = '', whenStarted = () => {}) {
  const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1')
  const chunks: Buffer[] = []
  let started = false
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    if (!started && Buffer.concat(chunks).includes('\r\n\r\n')) {
      started = true
      whenStarted()
    }
  })
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`)
  await once(socket, 'close')
  const raw = Buffer.concat(chunks)
  const split = raw.indexOf('\r\n\r\n')
  const head = raw.subarray(0, split).toString('latin1')
  // The chunks of the body, and whether the final (empty) chunk came.
  const parts: Buffer[] = []
  let at = split + 4
  let last = false
  while (at < raw.length) {
    const lineEnd = raw.indexOf('\r\n', at)
    if (lineEnd === -1) break
    const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) {
      last = raw.subarray(lineEnd, lineEnd + 4).toString('latin1') === '\r\n\r\n'
      break
    }
    parts.push(raw.subarray(lineEnd + 2, Math.min(lineEnd + 2 + size, raw.length)))
    at = lineEnd + 2 + size + 2
  }
  return { head, body: Buffer.concat(parts), lastChunk: last }
}

t.test('on the wire: a stream cut by the shutdown lacks the final chunk, compressed or not; one that ends has it', async (t) => {
  for (const encoding of ['identity', 'gzip']) {
    const app = await buildPlugins(t, routes, { SHUTDOWN_DRAIN: '50' })
    await app.listen({ port: 0, host: '127.0.0.1' })
    // The close starts once the answer has begun.
    let closed: Promise<void> | undefined
    const cut = await rawGet(app, '/forever', `Accept-Encoding: ${encoding}\r\n`, () => { closed = app.close() })
    await closed
    t.match(cut.head, /^HTTP\/1\.1 200 OK\r\n/, `${encoding}: 200`)
    t.match(cut.head, /\r\ntransfer-encoding: chunked/i, `${encoding}: chunked`)
    t.equal(cut.lastChunk, false, `${encoding}: no final chunk: the connection closed in its place`)
    // Everything the compressor held was delivered: the gzip stream itself is whole.
    const text = (encoding === 'gzip' ? zlib.gunzipSync(cut.body) : cut.body).toString('utf8')
    t.ok(text.length > 0 && text.endsWith('\n'), `${encoding}: the lines produced, ending at a line boundary`)
    t.equal(text.split('\n').slice(0, -1).filter((line) => JSON.parse(line).label !== PAD).length, 0, `${encoding}: whole lines`)

    const app2 = await buildPlugins(t, routes)
    await app2.listen({ port: 0, host: '127.0.0.1' })
    const ended = await rawGet(app2, '/count?count=2000', `Accept-Encoding: ${encoding}\r\nConnection: close\r\n`)
    t.equal(ended.lastChunk, true, `${encoding}: a stream that ends has the final chunk`)
    t.equal((encoding === 'gzip' ? zlib.gunzipSync(ended.body) : ended.body).toString('utf8').split('\n').length - 1, 2000)
  }
})

t.test('a stream that starts once the drain is over: nothing sent yet, so a 503 with Retry-After', async (t) => {
  let gate: (() => void) | undefined
  const app = await buildPlugins(t, (server) => {
    server.get('/late', { schema: { produces: ['application/x-ndjson'] } }, async (request, reply) => {
      await new Promise<void>((resolve) => { gate = resolve })
      current = counted(forever())
      return reply.ndjson(current.source, Item)
    })
  })
  const answer = app.inject({ url: '/late' })
  await until(() => gate !== undefined)
  const closed = app.close()
  gate!()
  const res = await answer
  await closed
  assertError(t, res, 503, 'shutting down')
  t.equal(res.headers['retry-after'], '5')
  t.equal(res.headers.connection, 'close')
  t.equal(current.state.pulled, 0, 'nothing pulled')
})
