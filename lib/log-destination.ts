import fs from 'node:fs'
import os from 'node:os'

/** How long lines that the descriptor had no room for wait before they are tried again. */
export const RETRY_MS = 50

/**
 * The longest a line waits before it is written, when stdout has room: lines gather for up to this
 * long and go out in one write (a write per request, or even per turn of the event loop, costs the
 * service more CPU than the line itself: figures, bench/README.md). What a crash that skips the
 * exit's handler (SIGKILL, the kernel's OOM killer, a fatal V8 error) loses at most: docs/operations.md, Logs.
 */
export const FLUSH_MS = 100

/**
 * Characters that go out at the end of the turn rather than waiting for FLUSH_MS: a quarter of a
 * pipe's 64 KiB, so that a write of them fits in a pipe its reader keeps up with.
 */
export const FLUSH_LENGTH = 16 * 1024

/**
 * The most characters of lines that wait for room: past it a line is dropped and counted, so a
 * reader that has stopped reading costs a bounded amount of memory, not a little more each request.
 */
export const WAITING_LIMIT = 4 * 1024 * 1024

/** The line that says, once there is room again, how many lines were dropped (pino's shape, level warn). */
function droppedLine (dropped: number): string {
  return `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, hostname: os.hostname(), dropped, msg: `${dropped} log lines dropped: stdout took none of them in time` })}\n`
}

/**
 * Where pino writes the service's log lines: a file descriptor (stdout), written from the main
 * thread, the lines gathered in one write FLUSH_MS after the first of them, or at the end of the
 * turn once FLUSH_LENGTH characters wait (pino's `minLength`, with its timed flush). The descriptor must not
 * block (stdout a pipe or a socket: see `stdoutDestination`): lines that a full pipe has no room
 * for wait here, in order, and are tried again every RETRY_MS, up to WAITING_LIMIT (then dropped,
 * and their number written once there is room again). Once the reader has gone (EPIPE), or
 * the descriptor fails otherwise, lines are dropped as they come: no reader left to read them, and
 * a logger never stops the service.
 *
 * It replaces pino's own destination (sonic-boom) for the sake of the exit. That one writes what
 * waits at exit synchronously and retries until it is written: with a reader that has stopped, or
 * one that has gone, it retries for ever, and the process never exits. Here the exit (`writeNow`)
 * writes what the descriptor takes at once, and gives up on the rest; `flushed` lets whoever must
 * not lose the lines wait for them, for as long as it can wait: the close, within its grace
 * (service.ts).
 */
export class LogDestination {
  readonly #fd: number
  /** The part the descriptor did not take of the last write it was given. */
  #unsent: Buffer | undefined
  /** The lines that came since, after it. */
  #later = ''
  /** The write to come: FLUSH_MS after the first line waiting, after this turn of the event loop, or RETRY_MS after the descriptor had no room. */
  #next: NodeJS.Immediate | NodeJS.Timeout | undefined
  /** Whether #next is the FLUSH_MS timer, which more lines, or someone waiting for them, bring forward. */
  #delayed = false
  #gone = false
  /** Lines dropped since the last write, for want of room. */
  #dropped = 0
  /** Called when nothing waits any more. */
  #onFlushed: Array<() => void> = []

  constructor (fd: number) {
    this.#fd = fd
  }

  /** pino's one call: a line (or several), written within FLUSH_MS. */
  write (line: string): void {
    if (this.#gone) return
    if (this.waiting + line.length > WAITING_LIMIT) {
      this.#dropped++
      return
    }
    this.#later += line
    if (this.#next === undefined) {
      if (this.#later.length < FLUSH_LENGTH) {
        // Unreferenced: lines waiting never keep the process alive; its exit writes them.
        this.#next = setTimeout(this.#writeNext, FLUSH_MS).unref()
        this.#delayed = true
      } else {
        this.#next = setImmediate(this.#writeNext)
      }
    } else if (this.#delayed && this.#later.length >= FLUSH_LENGTH) {
      this.#soon()
    }
  }

  /** The FLUSH_MS timer brought forward to the end of this turn. */
  #soon (): void {
    clearTimeout(this.#next as NodeJS.Timeout)
    this.#delayed = false
    this.#next = setImmediate(this.#writeNext)
  }

  /** How much waits to be written: bytes of a line cut short, characters of the lines after it. */
  get waiting (): number {
    return (this.#unsent?.length ?? 0) + this.#later.length
  }

  /**
   * Resolves once every line written so far is out, or never will be (the descriptor is gone): lines
   * waiting for FLUSH_MS are written at the end of this turn.
   */
  flushed (): Promise<void> {
    if (this.#unsent === undefined && this.#later === '') return Promise.resolve()
    if (this.#delayed) this.#soon()
    return new Promise((resolve) => this.#onFlushed.push(resolve))
  }

  /**
   * What waits, written as far as the descriptor takes it now: the exit's last call, which must
   * neither wait for room nor throw.
   */
  writeNow (): void {
    this.#writeOut()
  }

  readonly #writeNext = (): void => {
    this.#next = undefined
    this.#delayed = false
    if (!this.#writeOut()) this.#next = setTimeout(this.#writeNext, RETRY_MS)
  }

  /**
   * Writes what waits, as far as the descriptor takes it: false if it had no room for all of it,
   * true once it is all out (or dropped, the descriptor gone).
   */
  #writeOut (): boolean {
    try {
      for (;;) {
        if (this.#unsent === undefined) {
          if (this.#later === '' && this.#dropped > 0) {
            this.#later = droppedLine(this.#dropped)
            this.#dropped = 0
          }
          if (this.#later === '') break
          this.#unsent = Buffer.from(this.#later)
          this.#later = ''
        }
        const written = fs.writeSync(this.#fd, this.#unsent)
        this.#unsent = written < this.#unsent.length ? this.#unsent.subarray(written) : undefined
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false
      this.#gone = true
      this.#unsent = undefined
      this.#later = ''
    }
    if (this.#onFlushed.length > 0) for (const resolve of this.#onFlushed.splice(0)) resolve()
    return true
  }
}

let stdout: LogDestination | undefined

/**
 * The process's stdout as a log destination: one for the process, made on first use. Node makes
 * `process.stdout` of a pipe or a socket with its descriptor in non-blocking mode: a write to a
 * full pipe fails (EAGAIN) instead of stopping the event loop. At exit, what waits is written as
 * far as stdout takes it at once.
 */
export function stdoutDestination (): LogDestination {
  if (stdout === undefined) {
    const destination = stdout = new LogDestination(process.stdout.fd)
    process.on('exit', () => destination.writeNow())
  }
  return stdout
}
