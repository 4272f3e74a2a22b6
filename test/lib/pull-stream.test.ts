import { EventEmitter, getEventListeners, once } from 'node:events'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { CHUNK_SIZE, PullStream, isThenable, type PullOptions, type PullSource } from '../../lib/pull-stream.js'

const LOG = { stopped: 'stopped', failed: 'failed', left: 'left', closeFailed: 'close failed' }
const PIECE = 'x'.repeat(1023) + '\n'

/** What a PullStream is given of a reply: a log that keeps its lines, and a response whose `end` cutAtEnd replaces. */
function fakeReply () {
  const lines: Array<{ level: string, msg: string, fields: Record<string, unknown> }> = []
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => { lines.push({ level, msg, fields }) }
  const end = () => {}
  const raw = { end }
  return {
    lines,
    reply: { log: { info: at('info'), error: at('error'), warn: at('warn') }, raw } as unknown as ConstructorParameters<typeof PullStream>[0],
    /** Whether cutAtEnd has taken the response's end: the body is cut rather than ended. */
    cut: () => raw.end !== end
  }
}

/**
 * A source of `count` pieces (Infinity: endless) that counts its pulls and closes. `wait`: each
 * piece is a promise; `failAt`: the pull that throws; `done`: it says when it has given its last piece.
 */
function counted ({ count = Infinity, wait = false, failAt = -1, done = false } = {}) {
  const state = { pulled: 0, closes: 0 }
  const source: PullSource & { done?: boolean } = {
    next () {
      if (state.pulled === failAt) {
        if (wait) return Promise.reject(new Error('the source failed'))
        throw new Error('the source failed')
      }
      if (state.pulled >= count) return wait ? Promise.resolve(undefined) : undefined
      state.pulled++
      return wait ? Promise.resolve(PIECE) : PIECE
    },
    get items () { return state.pulled },
    close () { state.closes++ }
  }
  if (done) Object.defineProperty(source, 'done', { get: () => state.pulled >= count })
  return { state, source }
}

/** A source whose every pull waits until the test releases it; `lastAtFirst`: its first piece is its last. */
function pending ({ lastAtFirst = false } = {}) {
  const state = { pulls: 0, release: (_piece: string) => {} }
  const source: PullSource = {
    next () {
      state.pulls++
      return new Promise((resolve) => { state.release = resolve })
    },
    get items () { return state.pulls },
    close () {}
  }
  if (lastAtFirst) Object.defineProperty(source, 'done', { get: () => state.pulls === 1 })
  return { state, source }
}

async function readAll (stream: PullStream): Promise<string[]> {
  const chunks: string[] = []
  for await (const chunk of stream) chunks.push(String(chunk))
  return chunks
}

function pullStream (source: PullSource, options: Partial<PullOptions> = {}) {
  const fake = fakeReply()
  return { ...fake, stream: new PullStream(fake.reply, source, { log: LOG, ...options }) }
}

t.test('isThenable tells a promise from a value', async (t) => {
  t.ok(isThenable(Promise.resolve(1)))
  t.ok(isThenable({ then () {} }))
  t.notOk(isThenable('text'))
  t.notOk(isThenable(undefined))
  t.notOk(isThenable(null))
})

t.test('the whole body, in chunks of CHUNK_SIZE, then the source is closed once', async (t) => {
  for (const wait of [false, true]) {
    const { state, source } = counted({ count: 200, wait })
    const { stream, cut, lines } = pullStream(source)
    const chunks = await readAll(stream)
    t.equal(chunks.join(''), PIECE.repeat(200), wait ? 'from promises' : 'from values')
    for (const chunk of chunks.slice(0, -1)) t.ok(chunk.length >= CHUNK_SIZE && chunk.length < CHUNK_SIZE + PIECE.length, 'a whole chunk')
    t.equal(state.pulled, 200)
    t.equal(state.closes, 1, 'closed at its end')
    t.notOk(cut(), 'ended, not cut')
    t.same(lines, [], 'nothing logged')
  }
})

t.test('the head is the body\'s beginning', async (t) => {
  const { source } = counted({ count: 2 })
  const { stream } = pullStream(source, { head: '[' })
  t.equal((await readAll(stream)).join(''), '[' + PIECE + PIECE)
})

t.test('backpressure: pulls only while the consumer wants more', async (t) => {
  const { state, source } = counted()
  const { stream, lines } = pullStream(source)
  stream.read(0)
  await nextTurn()
  await nextTurn()
  const first = state.pulled
  t.equal(first, CHUNK_SIZE / PIECE.length, 'one chunk, which fills the buffer')
  await nextTurn()
  t.equal(state.pulled, first, 'nothing more while nobody reads')
  t.ok(stream.read() !== null)
  await until(() => state.pulled > first)
  await nextTurn()
  await nextTurn()
  const second = state.pulled
  t.ok(second <= 3 * first, `${second} pieces pulled: the buffer was refilled, no more`)
  await nextTurn()
  t.equal(state.pulled, second, 'then nothing more while nobody reads')
  stream.destroy()
  await once(stream, 'close')
  t.equal(state.closes, 1, 'destroyed: the source is closed')
  t.match(lines, [{ level: 'info', msg: 'left', fields: { items: second } }])
})

t.test('a source that makes us wait: what was gathered is sent meanwhile', async (t) => {
  let release = (_piece: string | undefined) => {}
  let pulls = 0
  const source: PullSource = {
    next () {
      pulls++
      return pulls === 1 ? 'first\n' : pulls === 2 ? new Promise((resolve) => { release = resolve }) : undefined
    },
    get items () { return Math.min(pulls, 2) },
    close () {}
  }
  const { stream } = pullStream(source)
  const [chunk] = await once(stream, 'data') as [Buffer]
  t.equal(String(chunk), 'first\n', 'sent before the source answers')
  release('second\n')
  t.equal((await readAll(stream)).join(''), 'second\n')
})

t.test('the stop cuts the body after what was produced; the source is closed', async (t) => {
  const stop = new AbortController()
  const { state, source } = counted()
  const { stream, cut, lines } = pullStream(source, { stop: stop.signal, refusal: () => new Error('refused') })
  stream.read(0)
  await until(() => state.pulled > 0)
  await nextTurn()
  stop.abort()
  const chunks = await readAll(stream)
  t.equal(chunks.join(''), PIECE.repeat(state.pulled), 'every piece produced, whole')
  t.ok(cut(), 'the response is cut')
  t.equal(state.closes, 1)
  t.match(lines, [{ level: 'info', msg: 'stopped', fields: { items: state.pulled } }])
})

t.test('the stop before anything was produced', async (t) => {
  t.test('with a refusal: the stream fails with it', async (t) => {
    const stop = new AbortController()
    stop.abort()
    const { state, source } = counted()
    const { stream, cut, lines } = pullStream(source, { stop: stop.signal, refusal: () => new Error('refused') })
    await t.rejects(readAll(stream), { message: 'refused' })
    t.equal(state.pulled, 0, 'nothing pulled')
    t.equal(state.closes, 1)
    t.notOk(cut())
    t.same(lines, [])
  })
  t.test('without one, or after a head: the body is cut', async (t) => {
    for (const options of [{}, { head: '[', refusal: () => new Error('refused') }]) {
      const stop = new AbortController()
      const { state, source } = counted()
      const { stream, cut, lines } = pullStream(source, { stop: stop.signal, ...options })
      stop.abort()
      t.equal((await readAll(stream)).join(''), options.head ?? '')
      t.equal(state.pulled, 0)
      t.ok(cut())
      t.match(lines, [{ level: 'info', msg: 'stopped', fields: { items: 0 } }])
    }
  })
})

t.test('a source that knows its end is not pulled again, nor cut by a stop that comes meanwhile', async (t) => {
  const stop = new AbortController()
  const { state, source } = pending({ lastAtFirst: true })
  const { stream, cut } = pullStream(source, { stop: stop.signal, head: '[' })
  stream.read(0)
  await until(() => state.pulls === 1)
  stop.abort()
  state.release('last]')
  t.equal((await readAll(stream)).join(''), '[last]')
  t.equal(state.pulls, 1)
  t.notOk(cut(), 'ended whole')
})

t.test('a failing source', async (t) => {
  for (const wait of [false, true]) {
    t.test(`${wait ? 'rejecting' : 'throwing'} after some pieces: the body is cut after them`, async (t) => {
      const { state, source } = counted({ failAt: 3, wait })
      const { stream, cut, lines } = pullStream(source)
      t.equal((await readAll(stream)).join(''), PIECE.repeat(3))
      t.ok(cut())
      t.equal(state.closes, 1)
      t.match(lines, [{ level: 'error', msg: 'failed', fields: { items: 3, err: { message: 'the source failed' } } }])
    })
    t.test(`${wait ? 'rejecting' : 'throwing'} at once: the stream fails with its error`, async (t) => {
      const { state, source } = counted({ failAt: 0, wait })
      const { stream, cut, lines } = pullStream(source)
      await t.rejects(readAll(stream), { message: 'the source failed' })
      t.notOk(cut())
      t.equal(state.closes, 1)
      t.same(lines, [])
    })
  }
})

t.test('a source that fails to close is logged', async (t) => {
  for (const close of [() => { throw new Error('no close') }, () => Promise.reject(new Error('no close'))]) {
    const { stream, lines } = pullStream({ next: () => undefined, items: 0, close })
    await readAll(stream)
    await until(() => lines.length > 0)
    t.match(lines, [{ level: 'warn', msg: 'close failed', fields: { err: { message: 'no close' } } }])
  }
})

t.test('destroyed while the source makes us wait: what it gives then is dropped', async (t) => {
  let release = (_piece: string) => {}
  const { stream, lines } = pullStream({ next: () => new Promise((resolve) => { release = resolve }), items: 0, close () {} })
  stream.read(0)
  await nextTurn()
  stream.destroy()
  release(PIECE)
  await once(stream, 'close')
  t.equal(stream.readableLength, 0)
  t.match(lines, [{ level: 'info', msg: 'left' }])
})

t.test('a stop that comes once the body has ended changes nothing', async (t) => {
  const stop = new AbortController()
  const { state, source } = counted({ count: 1 })
  const { stream, cut, lines } = pullStream(source, { stop: stop.signal })
  stream.read(0)
  await until(() => stream.readableEnded || stream.readableLength > 0)
  await nextTurn()
  stop.abort()
  t.equal((await readAll(stream)).join(''), PIECE)
  t.notOk(cut())
  t.equal(state.closes, 1)
  t.same(lines, [])
})

t.test('destroyed while the source makes us wait', async (t) => {
  t.test('what was gathered is not sent', async (t) => {
    let pulls = 0
    const source: PullSource = { next: () => ++pulls === 1 ? 'gathered\n' : new Promise(() => {}), items: 0, close () {} }
    const { stream } = pullStream(source)
    const data: Buffer[] = []
    stream.on('data', (chunk: Buffer) => data.push(chunk))
    await until(() => pulls === 2)
    stream.destroy()
    await once(stream, 'close')
    await nextTurn()
    t.same(data, [], 'the gathered piece was dropped with the stream')
  })
  t.test('a failure then is not logged', async (t) => {
    let fail = (_err: Error) => {}
    const { stream, lines } = pullStream({ next: () => new Promise((_resolve, reject) => { fail = reject }), items: 1, close () {} })
    stream.read(0)
    await nextTurn()
    stream.destroy()
    await once(stream, 'close')
    fail(new Error('too late'))
    await nextTurn()
    t.match(lines, [{ level: 'info', msg: 'left' }])
    t.equal(lines.length, 1)
  })
})

t.test('the stop while the consumer is not reading: the source is closed and the cut logged at once', async (t) => {
  const stop = new AbortController()
  const { state, source } = counted()
  const { stream, cut, lines } = pullStream(source, { stop: stop.signal })
  stream.read(0)
  await until(() => state.pulled > 0)
  await nextTurn()
  await nextTurn()
  const pulled = state.pulled
  stop.abort()
  t.equal(state.closes, 1, 'closed before anything more is read')
  t.ok(cut(), 'cut')
  t.same(lines.map((line) => line.msg), ['stopped'], 'logged at once, and only that')
  t.equal((await readAll(stream)).join(''), PIECE.repeat(pulled), 'what was produced is still delivered')
  t.equal(state.pulled, pulled, 'nothing more pulled')
  t.same(lines.map((line) => line.msg), ['stopped'], 'its end is not taken for a client that left')
  t.equal(getEventListeners(stop.signal, 'abort').length, 0, 'the stream no longer listens to the stop')
})

t.test('the stop while a pull is pending: the piece it gives is the last', async (t) => {
  const stop = new AbortController()
  const { state, source } = pending()
  const { stream, cut } = pullStream(source, { stop: stop.signal })
  stream.read(0)
  await until(() => state.pulls === 1)
  stop.abort()
  state.release(PIECE)
  t.equal((await readAll(stream)).join(''), PIECE)
  t.equal(state.pulls, 1, 'not pulled again')
  t.ok(cut())
})

t.test('a failing source is closed before the failure is logged, and the stop no longer listened to', async (t) => {
  const stop = new AbortController()
  const events: string[] = []
  const { source } = counted({ failAt: 3 })
  const closing = { ...source, close () { events.push('closed') } }
  Object.defineProperty(closing, 'items', { get: () => 3 })
  const fake = fakeReply()
  const log = { ...fake.reply.log, error: () => { events.push('failed') } }
  const stream = new PullStream({ ...fake.reply, log } as typeof fake.reply, closing, { log: LOG, stop: stop.signal })
  await readAll(stream)
  t.same(events, ['closed', 'failed'])
  t.equal(getEventListeners(stop.signal, 'abort').length, 0)
})

async function until (check: () => boolean): Promise<void> {
  while (!check()) await nextTurn()
}

t.test('the socket: a chunk is begun only while the response\'s socket wants more; then once it drains', async (t) => {
  const { state, source } = counted()
  const fake = fakeReply()
  // A socket that holds as much as it takes (SOCKET_AHEAD) the kernel has not taken yet.
  const socket = Object.assign(new EventEmitter(), { writableNeedDrain: false })
  Object.assign(fake.reply.raw, { socket })
  const released: number[] = []
  const stream = new PullStream(fake.reply, source, { log: LOG, release: () => released.push(state.pulled) })
  // A consumer that reads everything it is given, at once: only the socket can hold the stream back.
  stream.on('data', () => { socket.writableNeedDrain = true })
  await until(() => state.pulled > 0)
  for (let i = 0; i < 20; i++) await nextTurn()
  t.equal(state.pulled, CHUNK_SIZE / PIECE.length, 'one chunk, then nothing while the socket is full')
  t.equal(getEventListeners(socket, 'drain').length, 1, 'waiting for its drain, once')
  socket.writableNeedDrain = false
  socket.emit('drain')
  await until(() => state.pulled === 2 * CHUNK_SIZE / PIECE.length)
  for (let i = 0; i < 20; i++) await nextTurn()
  t.equal(state.pulled, 2 * CHUNK_SIZE / PIECE.length, 'one more chunk at its drain, then the wait again')
  stream.destroy()
  await once(stream, 'close')
  t.equal(getEventListeners(socket, 'drain').length, 0, 'destroyed: no longer waiting')
  t.same(released, [2 * CHUNK_SIZE / PIECE.length], 'its slot given back once, when it was destroyed')
  socket.emit('drain')
  t.equal(state.closes, 1)
})

t.test('the socket: the stop cuts a stream that waits for its socket to drain', async (t) => {
  const { source } = counted()
  const fake = fakeReply()
  const socket = Object.assign(new EventEmitter(), { writableNeedDrain: false })
  Object.assign(fake.reply.raw, { socket })
  const stop = new AbortController()
  const stream = new PullStream(fake.reply, source, { log: LOG, stop: stop.signal })
  let bytes = 0
  stream.on('data', (chunk: Buffer) => { bytes += chunk.length; socket.writableNeedDrain = true })
  await until(() => bytes > 0)
  stop.abort()
  await once(stream, 'end')
  t.ok(fake.cut(), 'cut after what was produced, without waiting for the socket')
  t.equal(bytes, CHUNK_SIZE, 'one chunk')
})
