/**
 * JSON written byte by byte into a buffer, for the one line every request writes at info
 * (lib/access-log.ts): no string is made for it, none is kept until the line goes out, and nothing
 * is left for the garbage collector (figures: bench/README.md, "Logging").
 *
 * Each writer takes the buffer and where to write, and returns where it stopped; -1 when it cannot
 * write what it was given: no room left before the buffer's end, or a string that is not plain
 * (plainString). Given -1, a writer returns -1: a line is written as a chain of calls, and checked
 * once at its end. A line that comes out at -1 is written the ordinary way, as a string.
 */

/** The longest string plainString writes: a longer one is JSON.stringify's, on the string path. */
export const PLAIN_LIMIT = 1100

/**
 * `"text"` when every character of `text` is printable ASCII other than `"` and `\` (a request's
 * method, URL, host, address, id, nearly always): JSON.stringify would write it just so. -1 for
 * anything else: a character to escape or past ASCII, longer than PLAIN_LIMIT, or no room.
 */
export function plainString (buffer: Buffer, at: number, text: string): number {
  const length = text.length
  if (at < 0 || length > PLAIN_LIMIT || at + length + 2 > buffer.length) return -1
  buffer[at] = 0x22
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return -1
    buffer[at + 1 + i] = code
  }
  buffer[at + 1 + length] = 0x22
  return at + length + 2
}

/**
 * The longest `bytes` raw copies itself: a longer one is copied by the buffer's `set`, whose call
 * costs more than a loop for a few bytes and less past about a dozen (figures: bench/README.md).
 */
const COPIED_LIMIT = 12

/** `bytes` as they are (a line's fixed parts, encoded once: `literal`). */
export function raw (buffer: Buffer, at: number, bytes: Uint8Array): number {
  const length = bytes.length
  if (at < 0 || at + length > buffer.length) return -1
  if (length > COPIED_LIMIT) buffer.set(bytes, at)
  else for (let i = 0; i < length; i++) buffer[at + i] = bytes[i]!
  return at + length
}

/** A line's fixed part, encoded for raw. */
export const literal = (text: string): Buffer => Buffer.from(text, 'utf8')

/** How many digits a safe integer of 0 or more has (16 at most); -1 for any other number. */
export function integerLength (value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) return -1
  let digits = 1
  for (let bound = 10; value >= bound && digits < 16; bound *= 10) digits++
  return digits
}

/** The digits of a safe integer of 0 or more (a status, a port, a time); -1 for any other number. */
export function integer (buffer: Buffer, at: number, value: number): number {
  const digits = integerLength(value)
  if (at < 0 || digits < 0 || at + digits > buffer.length) return -1
  if (value <= 0x7fffffff) {
    // In 32-bit integers (a status, a port: nearly every call), which a division of doubles is not.
    for (let i = at + digits - 1, rest = value | 0; i >= at; i--) {
      const quotient = (rest / 10) | 0
      buffer[i] = 0x30 + rest - quotient * 10
      rest = quotient
    }
  } else {
    for (let i = at + digits - 1, rest = value; i >= at; i--, rest = Math.floor(rest / 10)) buffer[i] = 0x30 + rest % 10
  }
  return at + digits
}

/**
 * Milliseconds to the microsecond, as `milliseconds` (lib/logger.ts) writes them: `0.412`, `12.5`,
 * `3`. A negative or non-finite time (a clock's, never a request's) is -1.
 */
export function milliseconds (buffer: Buffer, at: number, ms: number): number {
  const micros = Math.round(ms * 1000)
  if (!(micros >= 0)) return -1
  const fraction = micros % 1000
  at = integer(buffer, at, (micros - fraction) / 1000)
  if (at < 0 || fraction === 0) return at
  if (at + 4 > buffer.length) return -1
  buffer[at] = 0x2e
  buffer[at + 1] = 0x30 + Math.floor(fraction / 100)
  const tens = Math.floor(fraction / 10) % 10
  const units = fraction % 10
  if (tens === 0 && units === 0) return at + 2
  buffer[at + 2] = 0x30 + tens
  if (units === 0) return at + 3
  buffer[at + 3] = 0x30 + units
  return at + 4
}
