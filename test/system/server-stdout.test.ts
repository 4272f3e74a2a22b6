import { once } from 'node:events'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { FLUSH_MS } from '../../lib/log-destination.js'
import { startServer, stdoutPipe, until, type RunningServer } from '../helpers/index.js'

// The production entry's log lines on a stdout that does not keep up (lib/log-destination.ts): a
// reader that is behind, that has stopped, or that has gone; and SIGTERM, which exits within
// SHUTDOWN_GRACE whatever stdout does.

/**
 * Log lines that stdout has no room for, when its reader has stopped reading: a request's "request
 * completed" line quotes its URL (cut at 1 kB), and 1,000 of them are far more than the pipe and the
 * test's read buffer hold (64 kB each on Linux). On connections of their own: the close has none to
 * wait for. Returns how many bytes the server wrote, at least.
 */
async function fillStdout (url: string): Promise<number> {
  const name = 'x'.repeat(1000)
  for (let sent = 0; sent < 1000; sent += 50) {
    await Promise.all(Array.from({ length: 50 }, () =>
      fetch(`${url}/hello?name=${name}`, { headers: { connection: 'close' } }).then((res) => res.text())))
  }
  return 1000 * name.length
}

/** Whether the server still accepts connections. */
function accepting (url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1')
    socket.on('connect', () => { socket.destroy(); resolve(true) })
    socket.on('error', () => resolve(false))
  })
}

/** The exit code, or 'still running' after `ms`. */
function exitWithin (server: RunningServer, ms: number): Promise<number | null | 'still running'> {
  return Promise.race([server.exited, new Promise<'still running'>((resolve) => setTimeout(resolve, ms, 'still running').unref())])
}

// The close with SIGTERM never waits on stdout past SHUTDOWN_GRACE (issue 30, point 9): pino's own
// destination retried, at exit, every write a full or broken pipe refused, for ever.

t.test('stdout\'s reader gone (npm start | head -4): the service serves on, its lines dropped; SIGTERM exits 0', async (t) => {
  const stdout = stdoutPipe(t)
  const server = await startServer(t, {}, { stdout })
  stdout.reader.destroy()
  for (let i = 0; i < 10; i++) t.equal((await fetch(`${server.url}/hello?name=x`)).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await exitWithin(server, 20_000), 0)
})

t.test('SIGTERM with stdout\'s reader stopped, log lines waiting: the process exits at SHUTDOWN_GRACE, exit 1', async (t) => {
  const stdout = stdoutPipe(t)
  const server = await startServer(t, { SHUTDOWN_GRACE: '2000' }, { stdout })
  stdout.reader.pause()
  const written = await fillStdout(server.url)
  t.ok(stdout.reader.bytesRead < written / 4, `the reader took ${stdout.reader.bytesRead} bytes of the ${written} or more written: the rest waits`)
  server.child.kill('SIGTERM')
  // A margin of 10 s past the grace for a busy machine.
  t.equal(await exitWithin(server, 12_000), 1, 'the grace ran out with lines unwritten: they are cut, as a request would be')
})

/**
 * The production entry, its stdout's reader stopped and the pipe full, then SIGTERM: resolves once
 * the close is done but for its last log lines, which wait (pino's own destination was in its
 * exit's flush by then, retrying the writes a full pipe refused). A grace no busy machine runs out
 * of meanwhile.
 */
async function closedButForLogLines (t: Test) {
  const stdout = stdoutPipe(t)
  const server = await startServer(t, { SHUTDOWN_GRACE: '60000' }, { stdout })
  stdout.reader.pause()
  await fillStdout(server.url)
  server.child.kill('SIGTERM')
  await until(async () => !await accepting(server.url))
  await sleep(1000)
  return { server, stdout }
}

t.test('SIGTERM with stdout\'s reader stopped, which then goes: the process exits as soon as it has, exit 0', async (t) => {
  const { server, stdout } = await closedButForLogLines(t)
  stdout.reader.destroy()
  t.equal(await exitWithin(server, 20_000), 0, 'with no reader left, the lines are dropped and the close is done')
})

t.test('SIGTERM with stdout\'s reader behind: the close waits for it, every line reaches it, the last ones too, exit 0', async (t) => {
  // The reader catches up only once the close is done but for its last log lines: an exit that
  // did not wait for them has come by then.
  const { server, stdout } = await closedButForLogLines(t)
  const ended = once(stdout.reader, 'end')
  stdout.reader.resume()
  t.equal(await exitWithin(server, 20_000), 0)
  await ended
  t.equal(server.logs.filter((entry) => entry.msg === 'request completed').length, 1000, 'every request\'s lines')
  t.equal(server.logs.at(-1)?.msg, 'closing: new connections refused, open ones drained', 'and the close\'s')
})

t.test('a crash that skips the exit (SIGKILL) loses no line older than FLUSH_MS; lines reach stdout without an exit', async (t) => {
  const server = await startServer(t)
  const ids = Array.from({ length: 20 }, (_, i) => `crash-${i}`)
  for (const id of ids) t.equal((await fetch(`${server.url}/hello?name=x`, { headers: { 'x-request-id': id } })).status, 200)
  const logged = () => ids.filter((id) => server.logs.some((entry) => entry.reqId === id && entry.msg === 'request completed')).length
  // Lines gather for FLUSH_MS, then go out (docs/operations.md, Logs).
  await until(() => logged() === ids.length)
  t.pass('every request\'s line on stdout while the service runs')
  const late = 'crash-late'
  t.equal((await fetch(`${server.url}/hello?name=x`, { headers: { 'x-request-id': late } })).status, 200)
  await sleep(FLUSH_MS * 3)
  server.child.kill('SIGKILL')
  await server.exited
  // What the pipe held reaches the test after the exit: a line never written never comes (until() gives up).
  await until(() => server.logs.some((entry) => entry.reqId === late))
  t.pass('the line of a request answered FLUSH_MS before the crash')
})
