import { EventEmitter } from 'node:events'
import t from 'tap'
import { SIGNAL_ECHO_MS, onCloseSignals } from '../../lib/close-signals.js'

// The signals of a close (service.ts, scripts/dev.js): their process end to end, through npm, in
// test/system/npm-scripts.test.ts.

/** A process that signals are sent to as Node emits them (the signal's name as the argument), and a clock moved by hand. */
function setup (signals = ['SIGINT', 'SIGTERM']) {
  const source = new EventEmitter()
  let clock = 5000
  const calls: string[] = []
  onCloseSignals(signals, { close: (signal) => calls.push(`close ${signal}`), force: (signal) => calls.push(`force ${signal}`) }, source, () => clock)
  return {
    send: (signal: string) => source.emit(signal, signal),
    wait: (ms: number) => { clock += ms },
    calls
  }
}

t.test('the first signal closes; the same one again within the echo window is its echo, ignored', async (t) => {
  const { send, wait, calls } = setup()
  send('SIGINT')
  t.same(calls, ['close SIGINT'])
  send('SIGINT')
  wait(SIGNAL_ECHO_MS - 1)
  send('SIGINT')
  t.same(calls, ['close SIGINT'], 'npm\'s copy of a Ctrl-C the process had already: no second close, no force')
})

t.test('the same signal once the window has passed forces the exit, each time', async (t) => {
  const { send, wait, calls } = setup()
  send('SIGTERM')
  wait(SIGNAL_ECHO_MS)
  send('SIGTERM')
  send('SIGTERM')
  t.same(calls, ['close SIGTERM', 'force SIGTERM', 'force SIGTERM'])
})

t.test('another signal forces at once: it is no echo of the first', async (t) => {
  const { send, calls } = setup()
  send('SIGTERM')
  send('SIGINT')
  t.same(calls, ['close SIGTERM', 'force SIGINT'])
})

t.test('only the signals given are listened to; the process and its clock by default', async (t) => {
  const { send, calls } = setup(['SIGHUP'])
  send('SIGINT')
  t.same(calls, [], 'SIGINT is not one of them')
  send('SIGHUP')
  t.same(calls, ['close SIGHUP'])

  const before = process.listenerCount('SIGUSR2')
  const seen: string[] = []
  onCloseSignals(['SIGUSR2'], { close: (signal) => seen.push(signal), force: (signal) => seen.push(`force ${signal}`) })
  t.teardown(() => { for (const listener of process.listeners('SIGUSR2').slice(before)) process.off('SIGUSR2', listener) })
  process.emit('SIGUSR2', 'SIGUSR2')
  process.emit('SIGUSR2', 'SIGUSR2')
  t.same(seen, ['SIGUSR2'], 'on the process, with performance.now() for a clock: the echo at once is ignored')
})
