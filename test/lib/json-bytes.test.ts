import fc from 'fast-check'
import t from 'tap'
import { PLAIN_LIMIT, integer, integerLength, literal, milliseconds, plainString, raw } from '../../lib/json-bytes.js'
import { milliseconds as millisecondsString } from '../../lib/logger.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

// The request line's JSON, written byte by byte (lib/json-bytes.ts): what each writer writes is
// what JSON.stringify (or the string path, lib/logger.ts) writes, or -1 and the string path.

/** What `write` writes into a fresh buffer of `size` bytes, or -1. */
function written (write: (buffer: Buffer, at: number) => number, size = 4096): string | -1 {
  const buffer = Buffer.alloc(size)
  const end = write(buffer, 3)
  return end < 0 ? -1 : buffer.toString('utf8', 3, end)
}

t.test('plainString writes a plain string as JSON.stringify does, and refuses any other', async (t) => {
  for (const text of ['', 'GET', '/hello?name=x', 'localhost:3000', '::ffff:127.0.0.1', ' ~!#$%&\'()*+,-./:;<=>?@[]^_`{|}']) {
    t.equal(written((buffer, at) => plainString(buffer, at, text)), JSON.stringify(text), text)
  }
  for (const text of ['a"b', 'a\\b', 'tab\there', 'new\nline', '\u007f', 'h\u00e9', '\ud83d\ude00', '\ud800', 'x'.repeat(PLAIN_LIMIT + 1)]) {
    t.equal(written((buffer, at) => plainString(buffer, at, text)), -1, JSON.stringify(text).slice(0, 20))
  }
  t.equal(written((buffer, at) => plainString(buffer, at, 'x'.repeat(PLAIN_LIMIT))), JSON.stringify('x'.repeat(PLAIN_LIMIT)), 'PLAIN_LIMIT characters')
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
    const bytes = written((buffer, at) => plainString(buffer, at, text))
    // Written, it is JSON.stringify's; refused, JSON.stringify escapes something or writes past ASCII.
    return bytes === -1 ? JSON.stringify(text) !== `"${text}"` || /[^\x20-\x7e]/.test(text) : bytes === JSON.stringify(text)
  }), { numRuns: propertyRuns(2000), seed: SEED })
})

t.test('integer writes the digits of a safe integer of 0 or more, and refuses any other number', async (t) => {
  for (const value of [0, 7, 10, 200, 65535, 1795873624370, Number.MAX_SAFE_INTEGER]) {
    t.equal(written((buffer, at) => integer(buffer, at, value)), String(value))
  }
  for (const value of [-1, 3.5, Number.NaN, Infinity, Number.MAX_SAFE_INTEGER + 1]) {
    t.equal(written((buffer, at) => integer(buffer, at, value)), -1, String(value))
    t.equal(integerLength(value), -1, String(value))
  }
  fc.assert(fc.property(fc.maxSafeNat(), (value) => {
    return written((buffer, at) => integer(buffer, at, value)) === String(value) && integerLength(value) === String(value).length
  }), { numRuns: propertyRuns(2000), seed: SEED })
  for (let power = 1; power < 1e16; power *= 10) {
    t.equal(integerLength(power - 1), String(power - 1).length, `${power - 1}`)
    t.equal(integerLength(power), String(power).length, `${power}`)
  }
})

t.test('milliseconds writes what the string path writes: to the microsecond, no trailing zeros', async (t) => {
  const cases: Array<[number, string]> = [[0, '0'], [3, '3'], [12.5, '12.5'], [0.412, '0.412'], [0.41212499141693115, '0.412'],
    [0.0004, '0'], [0.0005, '0.001'], [1.2, '1.2'], [1.02, '1.02'], [1.002, '1.002'], [999.9996, '1000'], [60000.25, '60000.25']]
  for (const [ms, text] of cases) {
    t.equal(millisecondsString(ms), text, `string: ${ms}`)
    t.equal(written((buffer, at) => milliseconds(buffer, at, ms)), text, `bytes: ${ms}`)
  }
  t.equal(written((buffer, at) => milliseconds(buffer, at, -1)), -1, 'a negative time: the string path')
  t.equal(millisecondsString(-1.5), '-1.5')
  t.equal(millisecondsString(-0.25), '-0.25')
  fc.assert(fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (ms) => {
    const text = millisecondsString(ms)
    return written((buffer, at) => milliseconds(buffer, at, ms)) === text && Math.abs(Number(text) - ms) <= 0.0005 + ms * Number.EPSILON
  }), { numRuns: propertyRuns(2000), seed: SEED })
})

t.test('a writer given -1, or without room before the buffer\'s end, returns -1: a line is checked once, at its end', async (t) => {
  const bytes = literal('"msg":')
  t.equal(raw(Buffer.alloc(10), -1, bytes), -1)
  t.equal(plainString(Buffer.alloc(10), -1, 'x'), -1)
  t.equal(integer(Buffer.alloc(10), -1, 1), -1)
  t.equal(milliseconds(Buffer.alloc(10), -1, 1), -1)
  t.equal(raw(Buffer.alloc(8), 3, bytes), -1, 'raw: 6 bytes after 3 of 8')
  t.equal(raw(Buffer.alloc(9), 3, bytes), 9, 'raw: exactly to the end')
  t.equal(plainString(Buffer.alloc(8), 3, 'abcd'), -1, 'plainString: 6 bytes after 3 of 8')
  t.equal(plainString(Buffer.alloc(9), 3, 'abcd'), 9)
  t.equal(integer(Buffer.alloc(4), 3, 10), -1, 'integer: 2 digits after 3 of 4')
  t.equal(integer(Buffer.alloc(5), 3, 10), 5, 'integer: exactly to the end')
  t.equal(milliseconds(Buffer.alloc(19), 3, 1e12 + 0.25), -1, 'milliseconds: room for the whole milliseconds, not the fraction')
})
