import fs from 'node:fs'
import os from 'node:os'

/** How long lines that the descriptor had no room for wait before they are tried again. */
export const RETRY_MS = 50

/**
 * How long they wait instead while the reader is taking them (the last try wrote some): a pipe
 * holds 64 KiB, so a try every RETRY_MS wrote little more to a reader slower than the writes,
 * 1.3 MB/s, and lines a reader fell behind on for a moment kept waiting, and past WAITING_LIMIT
 * were dropped, long after it had caught up (figures: docs/operations.md).
 */
export const DRAIN_MS = 1

/**
 * The longest a line waits before it is written, when stdout has room: lines gather for up to this
 * long and go out in one write (a write per request, or even per turn of the event loop, costs the
 * service more CPU than the line itself: figures, bench/README.md). What a crash that skips the
 * exit's handler (SIGKILL, the kernel's OOM killer, a fatal V8 error) loses at most: docs/operations.md, Logs.
 */
export const FLUSH_MS = 100

/**
 * Bytes that go out at the end of the turn rather than waiting for FLUSH_MS: a quarter of a
 * pipe's 64 KiB, so that a write of them fits in a pipe its reader keeps up with.
 */
export const FLUSH_LENGTH = 16 * 1024

/**
 * The buffer lines gather in, reused from one write to the next: room for FLUSH_LENGTH and the
 * lines of the rest of a turn. A line that does not fit moves what the buffer holds to the bytes
 * that wait (a new buffer takes its place).
 */
export const BUFFER_SIZE = 64 * 1024

/**
 * The most bytes of lines that wait for room: past it a line is dropped and counted, so a
 * reader that has stopped reading costs a bounded amount of memory, not a little more each request.
 */
export const WAITING_LIMIT = 4 * 1024 * 1024

/**
 * The most lines deferred (`defer`) before they are written into the buffer at once rather than
 * at the end of the turn: what they hold (a request and its reply) is kept no longer than that.
 */
export const DEFERRED_LIMIT = 256

/** The room a deferred line is given in the buffer: past it, it is written as a string. */
export const LINE_ROOM = 8 * 1024

/**
 * A line written later (`defer`), from the three values it was deferred with and the time it is
 * written at (ms since the epoch, read once for all the lines written together): into the buffer
 * (`bytes`: where it ends, or -1 when it cannot be written so), or else as a string (`text`).
 */
export interface DeferredLine<A, B, C> {
  bytes (buffer: Buffer, at: number, a: A, b: B, c: C, time: number): number
  text (a: A, b: B, c: C, time: number): string
}

/** The line that says, once there is room again, how many lines were dropped (pino's shape, level warn). */
function droppedLine (dropped: number): string {
  return `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, hostname: os.hostname(), dropped, msg: `${dropped} log lines dropped: stdout took none of them in time` })}\n`
}

/**
 * Where pino writes the service's log lines: a file descriptor (stdout), written from the main
 * thread, the lines gathered in a buffer and written in one write FLUSH_MS after the first of
 * them, or at the end of the turn once FLUSH_LENGTH bytes wait (pino's `minLength`, with its timed
 * flush). A line comes as a string (`write`, pino's one call), or is deferred to the end of the
 * turn and then written into the buffer itself (`defer`: a request's line, lib/access-log.ts). The
 * descriptor must not
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
  /** The buffer the newest lines gather in, and how many bytes of it they take. */
  #buffer = Buffer.allocUnsafe(BUFFER_SIZE)
  #length = 0
  /** Older lines, before the buffer's: bytes the descriptor had no room for yet, in order. */
  readonly #older: Buffer[] = []
  #olderLength = 0
  /**
   * The timed write: FLUSH_MS after the first line that found none set, or RETRY_MS after the
   * descriptor had no room. A write at the end of the turn (#immediate) leaves it set: it then
   * writes the lines that came since, sooner than their own FLUSH_MS (clearing and setting a
   * timer for every FLUSH_LENGTH bytes cost more than the line itself).
   */
  #timer: NodeJS.Timeout | undefined
  /** The write at the end of this turn: FLUSH_LENGTH bytes wait, or someone waits for them (flushed). */
  #immediate: NodeJS.Immediate | undefined
  /** Whether the descriptor had no room at the last write: until one goes through, only RETRY_MS's timer writes. */
  #blocked = false
  #gone = false
  /** The lines deferred and not yet written into the buffer: four values each, the line and its three. */
  readonly #deferred: unknown[] = []
  #deferredImmediate: NodeJS.Immediate | undefined
  /** Lines dropped since the last write, for want of room. */
  #dropped = 0
  /** Bytes written so far: whether a try wrote some. */
  #out = 0
  /** Called when nothing waits any more. */
  #onFlushed: Array<() => void> = []

  constructor (fd: number) {
    this.#fd = fd
  }

  /** pino's one call: a line (or several), written within FLUSH_MS. */
  write (line: string): void {
    if (this.#deferred.length > 0) this.#writeDeferred()
    this.#writeText(line)
  }

  #writeText (line: string): void {
    if (this.#gone) return
    if (this.waiting + line.length > WAITING_LIMIT) {
      this.#dropped++
      return
    }
    // Three bytes at most for each of a string's UTF-16 code units; counted only when that may not fit.
    let bytes = line.length * 3
    if (this.#length + bytes > BUFFER_SIZE) bytes = Buffer.byteLength(line)
    if (bytes > BUFFER_SIZE) {
      this.#moveOlder()
      this.#older.push(Buffer.from(line))
      this.#olderLength += bytes
    } else {
      if (this.#length + bytes > BUFFER_SIZE) this.#moveOlder()
      this.#length += this.#buffer.write(line, this.#length)
    }
    this.#written()
  }

  /**
   * A line written into the buffer at the end of this turn (before any line written after it, or
   * at once when DEFERRED_LIMIT wait), from `a`…`c`: a request's line, whose serialisation then
   * runs once for all the requests of the turn, not in the middle of each (figures: bench/README.md).
   * What the values hold must not change until then. Its time is the clock's then, read once for
   * all the lines of the turn: the same millisecond as the request's end, or as late as the turn
   * was long.
   */
  defer<A, B, C> (line: DeferredLine<A, B, C>, a: A, b: B, c: C): void {
    if (this.#gone) return
    this.#deferred.push(line, a, b, c)
    if (this.#deferred.length >= DEFERRED_LIMIT * 4) this.#writeDeferred()
    else this.#deferredImmediate ??= setImmediate(this.#onDeferred)
  }

  readonly #onDeferred = (): void => {
    this.#deferredImmediate = undefined
    if (this.#deferred.length > 0) this.#writeDeferred()
  }

  /** The deferred lines, written into the buffer in order (or as strings, those that cannot be). */
  #writeDeferred (): void {
    const deferred = this.#deferred
    const time = Date.now()
    for (let i = 0; i < deferred.length; i += 4) {
      const line = deferred[i] as DeferredLine<unknown, unknown, unknown>
      const buffer = this.#room(LINE_ROOM)
      const end = buffer === undefined ? -1 : line.bytes(buffer, this.#length, deferred[i + 1], deferred[i + 2], deferred[i + 3], time)
      if (end >= 0) this.#length = end
      else this.#writeText(line.text(deferred[i + 1], deferred[i + 2], deferred[i + 3], time))
    }
    deferred.length = 0
    this.#written()
  }

  /**
   * The buffer, with room for `bytes` from #length on (what it holds moved after the older lines
   * if need be); undefined once the descriptor has gone or WAITING_LIMIT bytes wait.
   */
  #room (bytes: number): Buffer | undefined {
    if (this.#gone || this.waiting + bytes > WAITING_LIMIT) return undefined
    if (this.#length + bytes > BUFFER_SIZE) this.#moveOlder()
    return this.#buffer
  }

  /** Bytes now wait: the timed write is set, if none is, and the write at the end of the turn once FLUSH_LENGTH bytes wait. */
  #written (): void {
    // Unreferenced: lines waiting never keep the process alive; its exit writes them.
    if (this.#timer === undefined) this.#timer = setTimeout(this.#onTimer, FLUSH_MS).unref()
    if (this.#immediate === undefined && !this.#blocked && this.waiting >= FLUSH_LENGTH) this.#immediate = setImmediate(this.#onImmediate)
  }

  /** What the buffer holds, moved after the older bytes: the buffer is then free for newer lines. */
  #moveOlder (): void {
    if (this.#length === 0) return
    this.#older.push(this.#buffer.subarray(0, this.#length))
    this.#olderLength += this.#length
    this.#buffer = Buffer.allocUnsafe(BUFFER_SIZE)
    this.#length = 0
  }

  /** How many bytes wait to be written. */
  get waiting (): number {
    return this.#olderLength + this.#length
  }

  /**
   * Resolves once every line written so far is out, or never will be (the descriptor is gone): lines
   * waiting for FLUSH_MS are written at the end of this turn.
   */
  flushed (): Promise<void> {
    if (this.#deferred.length > 0) this.#writeDeferred()
    if (this.waiting === 0) return Promise.resolve()
    if (this.#immediate === undefined && !this.#blocked) this.#immediate = setImmediate(this.#onImmediate)
    return new Promise((resolve) => this.#onFlushed.push(resolve))
  }

  /**
   * What waits, written as far as the descriptor takes it now: the exit's last call, which must
   * neither wait for room nor throw.
   */
  writeNow (): void {
    this.#writeOut()
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined
    this.#write()
  }

  readonly #onImmediate = (): void => {
    this.#immediate = undefined
    this.#write()
  }

  /**
   * What waits, written; what the descriptor had no room for is tried again after DRAIN_MS if
   * this try wrote some, else after RETRY_MS.
   */
  #write (): void {
    const out = this.#out
    this.#blocked = !this.#writeOut()
    if (this.#blocked) {
      clearTimeout(this.#timer)
      this.#timer = setTimeout(this.#onTimer, this.#out > out ? DRAIN_MS : RETRY_MS)
    }
  }

  /**
   * Writes what waits, as far as the descriptor takes it: false if it had no room for all of it,
   * true once it is all out (or dropped, the descriptor gone).
   */
  #writeOut (): boolean {
    if (this.#deferred.length > 0) this.#writeDeferred()
    try {
      for (;;) {
        const older = this.#older[0]
        if (older !== undefined) {
          const written = fs.writeSync(this.#fd, older)
          this.#out += written
          this.#olderLength -= written
          if (written < older.length) this.#older[0] = older.subarray(written)
          else this.#older.shift()
        } else if (this.#length > 0) {
          const written = fs.writeSync(this.#fd, this.#buffer, 0, this.#length)
          this.#out += written
          // The rest of a write cut short waits as older bytes, copied: the buffer is written over next.
          if (written < this.#length) {
            this.#older.push(Buffer.from(this.#buffer.subarray(written, this.#length)))
            this.#olderLength += this.#length - written
          }
          this.#length = 0
        } else if (this.#dropped > 0) {
          const notice = droppedLine(this.#dropped)
          this.#dropped = 0
          this.#length = this.#buffer.write(notice)
        } else {
          break
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false
      this.#gone = true
      this.#older.length = 0
      this.#olderLength = 0
      this.#length = 0
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
