import type { RangeFieldType } from './grammar.js'

/**
 * The Range header of a collection as a regular expression (an OpenAPI `pattern`), written from
 * the same fields and types as the grammar parses (lib/range/grammar.ts, `parseRange`): every
 * string it matches, parseRange accepts with those fields. It is a subset, as close to the grammar
 * as stays readable: what it leaves out is rare or useless to a client, and parseRange still
 * takes it (docs/contract.md, Pagination by Range):
 * - options the grammar does not know, which it ignores;
 * - integers of 16 digits (those up to 9007199254740991), and digits sent percent-encoded;
 * - `-0` as a limit or an offset;
 * - characters outside printable ASCII left as they are, and tabs: a client sends them encoded.
 */

/** A hexadecimal digit, in either case as decodeURIComponent reads it. */
const HEX = '[0-9A-Fa-f]'
/** A UTF-8 continuation byte, percent-encoded: 80 to BF. */
const TAIL = '%[89ABab]' + HEX

/**
 * One character of a value: printable ASCII as it is but the space and `;` (they end the value)
 * and `%`, or a character percent-encoded as well-formed UTF-8 (RFC 3629's table: no overlong
 * forms, no surrogates, nothing past U+10FFFF), which is what decodeURIComponent decodes.
 */
const VALUE_CHARACTER = '(?:' + [
  '[!-$&-:<-~]',
  `%[0-7]${HEX}`,
  `%[Cc][2-9A-Fa-f]${TAIL}`,
  `%[Dd]${HEX}${TAIL}`,
  `%[Ee]0%[AaBb]${HEX}${TAIL}`,
  `%[Ee][1-9A-Ca-c]${TAIL}${TAIL}`,
  `%[Ee][Dd]%[89]${HEX}${TAIL}`,
  `%[Ee][EeFf]${TAIL}${TAIL}`,
  `%[Ff]0%[9AaBb]${HEX}${TAIL}${TAIL}`,
  `%[Ff][1-3]${TAIL}${TAIL}${TAIL}`,
  `%[Ff]4%8${HEX}${TAIL}${TAIL}`
].join('|') + ')'

/** At most 15 digits: every such number is a safe integer (the largest has 16). */
const DIGITS = '[0-9]{1,15}'

/** A value of each field type: any percent-encoded text, or a signed decimal integer. */
const VALUES: Readonly<Record<RangeFieldType, string>> = {
  string: `${VALUE_CHARACTER}+`,
  integer: `[+-]?${DIGITS}`
}

/** The options the grammar reads, each with its argument: limit and offset of at least 0, and the order. */
const OPTION = `(?:(?:limit|offset) +\\+?${DIGITS}|order +(?:asc|desc))`

/** A field name as a literal of the expression (a name is one token, but may hold `.` or `+`). */
const literal = (name: string) => name.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')

/**
 * The pattern of a Range header on these fields: `<field> [<value>]`, then `; <option> <arg>`
 * any number of times, spaces around each token as the grammar allows them.
 */
export function rangePattern (fields: ReadonlyMap<string, { type: RangeFieldType }>): string {
  const heads = [...fields].map(([name, { type }]) => `${literal(name)}(?: +${VALUES[type]})?`)
  return `^ *(?:${heads.join('|')}) *(?:; *${OPTION} *)*$`
}
