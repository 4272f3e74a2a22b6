import t from 'tap'
import {
  RANGE_ORDERS, contentRangeHeader, encodeRangeValue, nextRangeHeader, parseContentRange, parseRange,
  type Range, type RangeFieldGrammar
} from '../../../lib/range/grammar.js'

/** The fields of /colors, as the plugin hands them to the grammar. */
const FIELDS = new Map<string, RangeFieldGrammar>([
  ['name', { type: 'string', defaults: { limit: 100, offset: 0, order: 'desc' } }],
  ['hex', { type: 'string', defaults: { limit: 100, offset: 0, order: 'desc' } }],
  ['rgb', { type: 'integer', defaults: { limit: 5, offset: 0, order: 'desc' } }]
])

const parse = (header: string) => parseRange(header, FIELDS)

t.test('every example of docs/contract.md (Pagination by Range) parses, missing parts taking the field\'s defaults', async (t) => {
  const examples: Array<[string, Range]> = [
    // the tutorial's examples
    ['name', { field: 'name', limit: 100, offset: 0, order: 'desc' }],
    ['name; limit 2', { field: 'name', limit: 2, offset: 0, order: 'desc' }],
    ['name Green; order asc; offset 1', { field: 'name', value: 'Green', limit: 100, offset: 1, order: 'asc' }],
    // rangeable fields and their defaults: rgb has limit 5, its value is any integer
    ['hex', { field: 'hex', limit: 100, offset: 0, order: 'desc' }],
    ['rgb', { field: 'rgb', limit: 5, offset: 0, order: 'desc' }],
    ['rgb 256; order asc', { field: 'rgb', value: 256, limit: 5, offset: 0, order: 'asc' }],
    ['rgb 9007199254740991; limit 2', { field: 'rgb', value: 9007199254740991, limit: 2, offset: 0, order: 'desc' }],
    ['rgb -5; order asc; limit 1', { field: 'rgb', value: -5, limit: 1, offset: 0, order: 'asc' }],
    ['rgb +7', { field: 'rgb', value: 7, limit: 5, offset: 0, order: 'desc' }],
    ['rgb 1000', { field: 'rgb', value: 1000, limit: 5, offset: 0, order: 'desc' }],
    // the value is percent-decoded
    ['hex %23808080; limit 2', { field: 'hex', value: '#808080', limit: 2, offset: 0, order: 'desc' }],
    ['hex #808080; limit 2', { field: 'hex', value: '#808080', limit: 2, offset: 0, order: 'desc' }],
    ['name Dark%20Z; order asc; limit 4', { field: 'name', value: 'Dark Z', limit: 4, offset: 0, order: 'asc' }],
    ['name %C3%A9; limit 3', { field: 'name', value: 'é', limit: 3, offset: 0, order: 'desc' }],
    ['name Tan%3Bx; order asc; limit 2', { field: 'name', value: 'Tan;x', limit: 2, offset: 0, order: 'asc' }],
    ['name a+b', { field: 'name', value: 'a+b', limit: 100, offset: 0, order: 'desc' }],
    ['rgb %32%35%35', { field: 'rgb', value: 255, limit: 5, offset: 0, order: 'desc' }],
    // extra spaces are harmless; no spaces after ";" either
    ['   name    Green ;   order   asc ;  limit   3   ', { field: 'name', value: 'Green', limit: 3, offset: 0, order: 'asc' }],
    ['name;limit 3;offset 2;order asc', { field: 'name', limit: 3, offset: 2, order: 'asc' }],
    // Next-Range as the service writes it
    ['name White;limit 2;offset 1;order desc', { field: 'name', value: 'White', limit: 2, offset: 1, order: 'desc' }],
    ['name Aqua;limit 59;offset 1;order desc', { field: 'name', value: 'Aqua', limit: 59, offset: 1, order: 'desc' }],
    // unknown options are ignored; the first occurrence of an option wins (later ones are not read)
    ['name; foo 3; limit 2', { field: 'name', limit: 2, offset: 0, order: 'desc' }],
    ['name; Limit 7; limit 2', { field: 'name', limit: 2, offset: 0, order: 'desc' }],
    ['name; limit 2; limit 5; order asc; order desc', { field: 'name', limit: 2, offset: 0, order: 'asc' }],
    ['name; limit 2; limit abc', { field: 'name', limit: 2, offset: 0, order: 'desc' }],
    // limit and offset: integers ≥ 0, by the wire rules (docs/contract.md, Values on the wire)
    ['name; limit 0', { field: 'name', limit: 0, offset: 0, order: 'desc' }],
    ['name; limit +3; offset 007', { field: 'name', limit: 3, offset: 7, order: 'desc' }],
    ['name; limit -0; offset -0', { field: 'name', limit: 0, offset: 0, order: 'desc' }],
    ['name; offset 1000', { field: 'name', limit: 100, offset: 1000, order: 'desc' }],
    ['name; limit 9007199254740991', { field: 'name', limit: 9007199254740991, offset: 0, order: 'desc' }],
    ['name 0; order asc; limit 3', { field: 'name', value: '0', limit: 3, offset: 0, order: 'asc' }]
  ]
  for (const [header, range] of examples) {
    t.same(parse(header), range, JSON.stringify(header))
  }
  t.equal(Object.is((parse('rgb -0') as Range).value, 0), true, 'rgb -0 is 0, not -0')
})

t.test('every malformed form is a 400 error naming the problem', async (t) => {
  // [header, error code, what the message says]
  const malformed: Array<[string, string, RegExp]> = [
    // the header is empty, or has no field
    ['', 'API_ERR_RANGE_INVALID', /^Invalid Range: the header is empty; .* name, hex, rgb/],
    ['   ', 'API_ERR_RANGE_INVALID', /^Invalid Range: the header is empty/],
    ['; limit 2', 'API_ERR_RANGE_INVALID', /^Invalid Range: no field before the first ";"/],
    // the field is not a rangeable one; names are case-sensitive
    ['foo', 'API_ERR_RANGE_INVALID', /^Invalid Range: unknown field "foo"; the fields are name, hex, rgb/],
    ['Name', 'API_ERR_RANGE_INVALID', /unknown field "Name"/],
    ['NAME', 'API_ERR_RANGE_INVALID', /unknown field "NAME"/],
    ['hexx', 'API_ERR_RANGE_INVALID', /unknown field "hexx"/],
    ['bytes=0-100', 'API_ERR_RANGE_INVALID', /unknown field "bytes=0-100"/],
    ['name\tGreen', 'API_ERR_RANGE_INVALID', /unknown field "name\\tGreen"/],
    // a third token in the first piece
    ['name Green Blue', 'API_ERR_RANGE_INVALID', /^Invalid Range: "name Green Blue" has more than a field and a value/],
    // every later piece is exactly <option> <arg>
    ['name;', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: an option is empty/],
    ['name;;limit 2', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: an option is empty/],
    ['name; limit 2;', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: an option is empty/],
    ['name; limit', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: "limit" is not "<option> <arg>"/],
    ['name; limit 1 2', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: "limit 1 2" is not "<option> <arg>"/],
    ['name; foo', 'API_ERR_RANGE_OPTIONS', /"foo" is not "<option> <arg>"/],
    ['name; limit abc; foo', 'API_ERR_RANGE_OPTIONS', /"foo" is not/],
    // limit and offset: decimal integers ≥ 0 within the safe range
    ['name; limit abc', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: limit must be a decimal integer .*, got "abc"/],
    ['name; limit 1.5', 'API_ERR_RANGE_OPTIONS', /limit must be a decimal integer .*, got "1.5"/],
    ['name; limit 1e3', 'API_ERR_RANGE_OPTIONS', /limit must be a decimal integer/],
    ['name; limit 0x10', 'API_ERR_RANGE_OPTIONS', /limit must be a decimal integer/],
    ['name; limit 99999999999999999999', 'API_ERR_RANGE_OPTIONS', /limit must be a decimal integer between 0 and 9007199254740991/],
    ['name; offset abc', 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: offset must be a decimal integer .*, got "abc"/],
    ['name; limit -1', 'API_ERR_RANGE_LIMIT', /^Limit must be non-negative: the Range header has limit -1$/],
    ['name; offset -3', 'API_ERR_RANGE_OFFSET', /^Offset must be non-negative: the Range header has offset -3$/],
    // order: asc or desc, lower case
    ['name; order up', 'API_ERR_RANGE_ORDER', /^Invalid Range Order: order must be asc or desc \(lower case\), got "up"/],
    ['name; order ASC', 'API_ERR_RANGE_ORDER', /got "ASC"/],
    // the value: its percent-encoding, and for rgb the integer
    ['rgb x', 'API_ERR_RANGE_VALUE', /^Invalid Range Value: the rgb value must be a decimal integer .*, got "x"/],
    ['rgb 1.5', 'API_ERR_RANGE_VALUE', /the rgb value must be a decimal integer/],
    ['rgb 99999999999999999999', 'API_ERR_RANGE_VALUE', /the rgb value must be a decimal integer between -9007199254740991 and 9007199254740991/],
    ['rgb %20', 'API_ERR_RANGE_VALUE', /got " "/],
    ['name %zz', 'API_ERR_RANGE_VALUE', /^Invalid Range Value: the name value "%zz" is not valid percent-encoded UTF-8/],
    ['hex %E9', 'API_ERR_RANGE_VALUE', /the hex value "%E9" is not valid percent-encoded UTF-8/],
    // the checks run in order: field, option shapes, value, limit, offset, order
    ['name %zz; limit', 'API_ERR_RANGE_OPTIONS', /"limit" is not/],
    ['rgb x; limit -1', 'API_ERR_RANGE_VALUE', /rgb value/],
    ['name; order up; offset -1; limit -1', 'API_ERR_RANGE_LIMIT', /Limit/],
    ['name; order up; offset -1', 'API_ERR_RANGE_OFFSET', /Offset/]
  ]
  for (const [header, code, message] of malformed) {
    t.throws(() => parse(header), { statusCode: 400, code, message }, JSON.stringify(header))
  }
})

t.test('the conformance runner\'s malformed headers: each message names one of its words', async (t) => {
  const runner: Array<[string, string[]]> = [['foo', ['range']], ['Name', ['range']], ['bytes=0-100', ['range']],
    ['name;', ['range', 'option']], ['name; limit -1', ['range', 'limit']], ['name; limit abc', ['range', 'limit', 'abc']],
    ['name; order up', ['range', 'order']], ['rgb x', ['range', 'rgb', 'x']], ['', ['range']], ['NAME', ['range']],
    ['hexx', ['range']], ['name; limit', ['range', 'option', 'limit']], ['name; limit 1 2', ['range', 'option', 'limit']],
    ['name;;limit 2', ['range', 'option']], ['name; order ASC', ['range', 'order']], ['name; limit 1.5', ['range', 'limit']],
    ['name; limit 99999999999999999999', ['range', 'limit']], ['name; offset abc', ['range', 'offset', 'abc']],
    ['rgb 1.5', ['range', 'rgb']], ['rgb 99999999999999999999', ['range', 'rgb']], ['; limit 2', ['range']],
    ['name Green Blue', ['range']]]
  for (const [header, words] of runner) {
    let message = ''
    try {
      parse(header)
    } catch (err) {
      message = (err as Error).message.toLowerCase()
    }
    // Ours name every word, not just one.
    t.ok(words.every((word) => message.includes(word)), `${JSON.stringify(header)}: "${message}" names ${words.join(', ')}`)
  }
})

t.test('a long piece is shortened in the message, controls are escaped', async (t) => {
  t.throws(() => parse(`${'x'.repeat(500)}`), { message: `Invalid Range: unknown field "${'x'.repeat(60)}…"; the fields are name, hex, rgb (case-sensitive)` })
  t.throws(() => parse('name; order \u0001'), { message: /got "\\u0001"/ })
  t.throws(() => parse('x'.repeat(60)), { message: `Invalid Range: unknown field "${'x'.repeat(60)}"; the fields are name, hex, rgb (case-sensitive)` }, 'sixty characters are quoted whole')
  t.throws(() => parse('  name Dark Red  ; limit 1'), { message: 'Invalid Range: "name Dark Red" has more than a field and a value; percent-encode spaces in a value as %20' }, 'the piece quoted without its spaces around')
})

t.test('the orders a Range may ask for', async (t) => {
  t.same(RANGE_ORDERS, ['asc', 'desc'])
})

t.test('a field name that is an Object.prototype member is not a field', async (t) => {
  for (const header of ['constructor', '__proto__', 'toString 1']) {
    t.throws(() => parse(header), { code: 'API_ERR_RANGE_INVALID' }, header)
  }
})

t.test('values are percent-encoded in the response headers', async (t) => {
  t.equal(encodeRangeValue('#808080'), '%23808080', '# is %23')
  t.equal(encodeRangeValue('Dark Z'), 'Dark%20Z', 'space is %20')
  t.equal(encodeRangeValue("AZaz09-_.!~*'()"), "AZaz09-_.!~*'()", 'the unreserved characters are kept')
  t.equal(encodeRangeValue('Tan;x,y'), 'Tan%3Bx%2Cy', '; and , are encoded')
  t.equal(encodeRangeValue('é€😀'), '%C3%A9%E2%82%AC%F0%9F%98%80', 'UTF-8')
  t.equal(encodeRangeValue('%+'), '%25%2B')
  t.equal(encodeRangeValue(''), '')
  t.equal(encodeRangeValue(-5), '-5')
  t.equal(encodeRangeValue('a\ud800b\udfff'), 'a%EF%BF%BDb%EF%BF%BD', 'a lone surrogate is U+FFFD')
})

t.test('Content-Range and Next-Range values', async (t) => {
  t.equal(contentRangeHeader('name', 'Yellow', 'White'), 'name Yellow..White')
  t.equal(contentRangeHeader('hex', '#ffffff', '#000000'), 'hex %23ffffff..%23000000')
  t.equal(contentRangeHeader('rgb', 765, -2), 'rgb 765..-2')
  t.equal(nextRangeHeader({ field: 'name', value: 'White', limit: 2, offset: 1, order: 'desc' }), 'name White;limit 2;offset 1;order desc')
  t.equal(nextRangeHeader({ field: 'hex', value: '#a b', limit: 0, offset: 0, order: 'asc' }), 'hex %23a%20b;limit 0;offset 0;order asc')
  t.equal(nextRangeHeader({ field: 'name', limit: 2, offset: 4, order: 'asc' }), 'name;limit 2;offset 4;order asc', 'no value: the field alone')
})

t.test('Content-Range values read back', async (t) => {
  t.same(parseContentRange('name Yellow..White', FIELDS), { field: 'name', first: 'Yellow', last: 'White' })
  t.same(parseContentRange('hex %23ffffff..%23000000', FIELDS), { field: 'hex', first: '#ffffff', last: '#000000' })
  t.same(parseContentRange('rgb -5..-7', FIELDS), { field: 'rgb', first: -5, last: -7 })
  t.same(parseContentRange('name ..', FIELDS), { field: 'name', first: '', last: '' })
  for (const header of ['name', 'name Yellow', 'foo a..b', 'Yellow..White', '']) {
    t.throws(() => parseContentRange(header, FIELDS), { code: 'API_ERR_RANGE_INVALID' }, JSON.stringify(header))
  }
  t.throws(() => parseContentRange('rgb a..1', FIELDS), { code: 'API_ERR_RANGE_VALUE' })
  t.throws(() => parseContentRange('name Yellow', FIELDS), { message: 'Invalid Range: "name Yellow" is not "<field> <first>..<last>"' })
})
