import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { DEFERRED_LIMIT, DRAIN_MS, FLUSH_LENGTH, FLUSH_MS, LogDestination, RETRY_MS, WAITING_LIMIT, stdoutDestination, type DeferredLine } from '../../lib/log-destination.js'
import { pipeDestination, until } from '../helpers/index.js'

/**
 * The destination's retries (every RETRY_MS) come after 1 ms for the rest of the test: a pipe
 * takes 64 kB at a time, so megabytes waiting took seconds of the clock to go out, and the test
 * waits on the reader, not on the clock. Returns how many retries were set so far.
 */
function quickRetries (t: Test): () => number {
  const setTimeout = globalThis.setTimeout
  let retries = 0
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (ms !== RETRY_MS) return setTimeout(callback, ms, ...args)
    retries++
    return setTimeout(callback, 1, ...args)
  }) as typeof globalThis.setTimeout
  t.teardown(() => { globalThis.setTimeout = setTimeout })
  return () => retries
}

/** `count` lines of about `size` bytes each, numbered. */
function lines (count: number, size: number): string[] {
  return Array.from({ length: count }, (_, i) => `{"n":${i},"msg":"${'x'.repeat(size)}"}\n`)
}

/** Counts the destination's writes from now on. */
function countedWrites (t: Test): () => number {
  const writeSync = fs.writeSync
  let writes = 0
  fs.writeSync = ((...args: Parameters<typeof writeSync>) => { writes++; return writeSync(...args) }) as typeof writeSync
  t.teardown(() => { fs.writeSync = writeSync })
  return () => writes
}

/** A line deferred with its text: written as bytes unless `bytes` is false. */
const deferred = (bytes = true): DeferredLine<string, unknown, unknown> => ({
  bytes: (buffer, at, text) => bytes ? at + buffer.write(text, at) : -1,
  text: (text) => text
})

t.test('lines gather for FLUSH_MS and go out in order, in one write', async (t) => {
  const { destination, received } = pipeDestination(t)
  const writes = countedWrites(t)
  const written = lines(3, 10)
  const start = performance.now()
  destination.write(written[0]!)
  await new Promise((resolve) => setImmediate(resolve))
  destination.write(written[1]!)
  destination.write(written[2]!)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(writes(), 0, 'none after the turns they were written in')
  await until(() => writes() > 0)
  t.ok(performance.now() - start >= FLUSH_MS - 1, 'after FLUSH_MS')
  await until(() => received() === written.join(''))
  t.equal(writes(), 1, 'the reader has them all, in order, from one write')
})

t.test('FLUSH_LENGTH characters go out at the end of the turn; flushed() brings the rest forward', async (t) => {
  const { destination, received } = pipeDestination(t)
  const writes = countedWrites(t)
  const many = lines(Math.ceil(FLUSH_LENGTH / 100), 90)
  for (const line of many) destination.write(line)
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(writes(), 1, 'written at the end of the turn')
  const last = '{"msg":"last"}\n'
  destination.write(last)
  const start = performance.now()
  await destination.flushed()
  t.ok(performance.now() - start < FLUSH_MS, 'flushed() does not wait for FLUSH_MS')
  t.equal(writes(), 2)
  await until(() => received() === many.join('') + last)
})

t.test('lines a full pipe has no room for wait, in order, whole, until the reader takes them; flushed() waits for them', async (t) => {
  const retries = quickRetries(t)
  const { destination, reader, received } = pipeDestination(t)
  reader.pause()
  // Far more than the pipe and the reader's buffer hold: the pipe takes part of a line, and the rest waits.
  const written = lines(20, 100_000)
  for (const line of written) destination.write(line)
  let flushed = false
  const done = destination.flushed().then(() => { flushed = true })
  // As many retries as 200 ms of them at their own pace (RETRY_MS).
  await until(() => retries() >= 200 / RETRY_MS)
  t.notOk(flushed, 'not flushed while the reader does not read')
  t.ok(received().length < written.join('').length, 'the reader has only part')
  reader.resume()
  await done
  await until(() => received().length === written.join('').length)
  t.equal(received(), written.join(''), 'every byte, in order: no line cut or doubled')
})

t.test('lines a reader fell behind on go out as fast as it takes them again, not a pipe\'s worth every RETRY_MS', async (t) => {
  // Each try of the destination's (a timer of DRAIN_MS or RETRY_MS), with the bytes written since the try before.
  const tries: Array<{ ms: number, wrote: number, resumed: boolean }> = []
  let wrote = 0
  let resumed = false
  const { writeSync } = fs
  fs.writeSync = ((...args: Parameters<typeof writeSync>) => {
    const written = writeSync(...args)
    wrote += written
    return written
  }) as typeof writeSync
  const { setTimeout } = globalThis
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (ms === DRAIN_MS || ms === RETRY_MS) {
      tries.push({ ms, wrote, resumed })
      wrote = 0
    }
    return setTimeout(callback, ms, ...args)
  }) as typeof globalThis.setTimeout
  t.teardown(() => {
    fs.writeSync = writeSync
    globalThis.setTimeout = setTimeout
  })
  const { destination, reader, received } = pipeDestination(t)
  reader.pause()
  // 2 MB: 32 times what the pipe holds.
  const written = lines(20, 100_000)
  for (const line of written) destination.write(line)
  const done = destination.flushed()
  await until(() => tries.some(({ ms }) => ms === RETRY_MS))
  resumed = true
  reader.resume()
  await done
  await until(() => received().length === written.join('').length)
  t.equal(received(), written.join(''), 'every byte, in order')
  t.ok(tries.length > 0)
  for (const { ms, wrote } of tries) t.equal(ms, wrote > 0 ? DRAIN_MS : RETRY_MS, 'a try that wrote some is followed by DRAIN_MS, one that wrote none by RETRY_MS')
  const slow = tries.filter(({ ms, resumed }) => resumed && ms === RETRY_MS).length
  t.ok(slow < 16, `once the reader reads, the tries come after DRAIN_MS (${slow} after RETRY_MS, for 32 pipes' worth)`)
})

t.test('once the reader has gone (EPIPE), lines are dropped: flushed() resolves, nothing throws', async (t) => {
  const { destination, reader } = pipeDestination(t)
  reader.pause()
  for (const line of lines(20, 100_000)) destination.write(line)
  const done = destination.flushed()
  reader.destroy()
  await done
  destination.write('{"msg":"after"}\n')
  await destination.flushed()
  t.pass('the lines that waited, and those after, are dropped')
})

t.test('writeNow(), the exit\'s: writes what fits and returns, whether the pipe is full or its reader gone', async (t) => {
  const { destination, reader, received } = pipeDestination(t)
  reader.pause()
  const written = lines(20, 100_000)
  for (const line of written) destination.write(line)
  destination.writeNow()
  t.pass('returns with the pipe full')
  reader.destroy()
  destination.writeNow()
  t.pass('and with no reader')
  t.ok(received().length < written.join('').length)

  const healthy = pipeDestination(t)
  healthy.destination.write('{"msg":"last"}\n')
  healthy.destination.writeNow()
  await until(() => healthy.received() === '{"msg":"last"}\n')
})

t.test('a descriptor that cannot be written at all: lines are dropped, nothing throws', async (t) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-')), 'read-only')
  fs.writeFileSync(file, '')
  const fd = fs.openSync(file, 'r')
  t.teardown(() => { fs.closeSync(fd); fs.rmSync(path.dirname(file), { recursive: true }) })
  const destination = new LogDestination(fd)
  destination.write('{"msg":"a"}\n')
  destination.write('{"msg":"b"}\n')
  await destination.flushed()
  t.equal(fs.readFileSync(file, 'utf8'), '')
})

t.test('stdout\'s destination is one for the process', async (t) => {
  t.equal(stdoutDestination(), stdoutDestination())
})

t.test('what waits for a reader that does not read is bounded: past the limit lines are dropped, and their number said once there is room', async (t) => {
  const retries = quickRetries(t)
  const { destination, reader, received } = pipeDestination(t)
  reader.pause()
  const written = lines(100, 100_000)
  for (const line of written) destination.write(line)
  // Once the pipe is full: the first write is over, and its rest waits for a retry.
  await until(() => retries() >= 1)
  t.ok(destination.waiting <= WAITING_LIMIT, `${destination.waiting} characters wait, not ${written.join('').length}`)
  reader.resume()
  await destination.flushed()
  await until(() => received().endsWith('\n') && received().includes('log lines dropped'))
  const got = received().split('\n').filter(Boolean).map((line) => JSON.parse(line))
  const notice = got.at(-1)
  t.match(notice, { level: 40, msg: /^\d+ log lines dropped: stdout took none of them in time$/ })
  t.equal(got.length - 1 + notice.dropped, written.length, 'each line either written whole or counted')
  t.same(got.slice(0, -1).map((line) => line.n), [...Array(got.length - 1).keys()], 'those written, the first ones, in order')
})

t.test('deferred lines that the buffer has no room left for: what it holds moves after the older lines, nothing lost or reordered', async (t) => {
  const { destination, received } = pipeDestination(t)
  destination.write('{"n":"first"}\n')
  // 1,000 bytes each, 63 of them: past BUFFER_SIZE less LINE_ROOM, the room a deferred line is given.
  const many = Array.from({ length: 63 }, (_, i) => `{"n":${String(i).padStart(6)},"msg":"${'x'.repeat(978)}"}\n`)
  for (const line of many) destination.defer(deferred(), line, 0, 0)
  destination.write('{"n":"last"}\n')
  await destination.flushed()
  await until(() => received().endsWith('{"n":"last"}\n'))
  t.equal(received(), `{"n":"first"}\n${many.join('')}{"n":"last"}\n`)
})

t.test('a write of the buffer that the pipe takes only part of: the rest waits, copied, and goes out in order', async (t) => {
  quickRetries(t)
  const { destination, reader, received } = pipeDestination(t)
  reader.pause()
  /** `count` lines of 1,000 bytes, deferred, numbered from `from`. */
  const commit = (from: number, count: number) => {
    const written = Array.from({ length: count }, (_, i) => `{"n":${String(from + i).padStart(6)},"msg":"${'x'.repeat(978)}"}\n`)
    for (const line of written) destination.defer(deferred(), line, 0, 0)
    return written
  }
  // 60 kB at a time, each written at once (writeNow), until the pipe has room for only part of one.
  const sent: string[] = []
  for (let from = 0; destination.waiting === 0; from += 60) {
    sent.push(...commit(from, 60))
    destination.writeNow()
  }
  t.ok(destination.waiting < 60 * 1000, `${destination.waiting} bytes wait, the rest of the last write`)
  sent.push(...commit(sent.length, 1))
  const done = destination.flushed()
  reader.resume()
  await done
  await destination.flushed()
  await until(() => received().length === sent.length * 1000)
  t.equal(received(), sent.join(''), 'every line whole, in order')
})

t.test('deferred lines are written into the buffer at the end of the turn, or at once past DEFERRED_LIMIT, before any later line, or as text', async (t) => {
  const { destination, received } = pipeDestination(t)
  destination.defer(deferred(), '{"n":0}\n', 0, 0)
  t.equal(destination.waiting, 0, 'not yet in the buffer')
  destination.write('{"n":1}\n')
  t.equal(destination.waiting, 16, 'a later line: the deferred one first')
  destination.defer(deferred(false), '{"n":2}\n', 0, 0)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(destination.waiting, 24, 'in the buffer at the end of the turn, as text')
  for (let n = 3; n < 3 + DEFERRED_LIMIT; n++) destination.defer(deferred(), `{"n":${n}}\n`, 0, 0)
  t.ok(destination.waiting > 24, 'DEFERRED_LIMIT lines: in the buffer at once')
  destination.defer(deferred(), '{"n":"last"}\n', 0, 0)
  destination.writeNow()
  await until(() => received().endsWith('{"n":"last"}\n'))
  const got = received().trimEnd().split('\n').map((line) => JSON.parse(line).n)
  t.same(got, [...Array(3 + DEFERRED_LIMIT).keys(), 'last'], 'every line, in order, the exit\'s write included')
})

t.test('the lines of a turn are written at one time, read from the clock once when they are written, as bytes and as text', async (t) => {
  const { destination, received } = pipeDestination(t)
  const timed = (bytes: boolean): DeferredLine<number, unknown, unknown> => ({
    bytes: (buffer, at, n, _b, _c, time) => bytes ? at + buffer.write(`{"n":${n},"time":${time}}\n`, at) : -1,
    text: (n, _b, _c, time) => `{"n":${n},"time":${time}}\n`
  })
  const now = Date.now
  let reads = 0
  Date.now = () => ++reads * 1000
  t.teardown(() => { Date.now = now })
  for (let n = 0; n < 4; n++) destination.defer(timed(n % 2 === 0), n, 0, 0)
  t.equal(reads, 0, 'not read when deferred')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(reads, 1, 'read once for the turn\'s lines')
  destination.defer(timed(true), 4, 0, 0)
  await destination.flushed()
  await until(() => received().split('\n').length === 6)
  t.same(received().trimEnd().split('\n').map((line) => JSON.parse(line)), [
    { n: 0, time: 1000 }, { n: 1, time: 1000 }, { n: 2, time: 1000 }, { n: 3, time: 1000 }, { n: 4, time: 2000 }
  ])
})

t.test('a deferred line without room in the buffer for it (near WAITING_LIMIT) is written as text', async (t) => {
  quickRetries(t)
  const { destination, received } = pipeDestination(t)
  const big = `{"big":"${'x'.repeat(WAITING_LIMIT - 4096)}"}\n`
  destination.write(big)
  destination.defer(deferred(), '{"n":"after"}\n', 0, 0)
  await destination.flushed()
  await until(() => received().length === big.length + 14)
  t.ok(received().endsWith('{"n":"after"}\n'), 'after the line before it')
})

t.test('lines that do not fit the rest of the buffer, each smaller than it, go out whole and in order', async (t) => {
  const { destination, received } = pipeDestination(t)
  const written = lines(5, 30_000)
  for (const line of written) destination.write(line)
  await destination.flushed()
  await until(() => received().length === written.join('').length)
  t.equal(received(), written.join(''))
})
