import t from 'tap'
import fc from 'fast-check'
import { parseRange, type RangeFieldGrammar, type RangeFieldType } from '../../../lib/range/grammar.js'
import { ID_RANGE_PATTERN, parseIdRange } from '../../../lib/range/keyed.js'
import { rangePattern } from '../../../lib/range/pattern.js'
import { rangeable } from '../../../lib/range/rangeable.js'
import { SEED, propertyRuns } from '../../helpers/property-runs.js'

const DEFAULTS = { limit: 100, offset: 0, order: 'desc' } as const
const grammarOf = (fields: ReadonlyArray<readonly [string, RangeFieldType]>) =>
  new Map<string, RangeFieldGrammar>(fields.map(([name, type]) => [name, { type, defaults: DEFAULTS }]))
/** The fields of /colors, as its route declares them. */
const COLORS = grammarOf([['name', 'string'], ['hex', 'string'], ['rgb', 'integer']])
/** JSON Schema's regular expressions are ECMA-262's with the `u` flag, as Ajv compiles them. */
const regex = (pattern: string) => new RegExp(pattern, 'u')

t.test('every string of a pattern is a Range the grammar accepts, on any fields', async (t) => {
  // Field names are single tokens, some with characters a regular expression would read.
  const name = fc.stringMatching(/^[A-Za-z0-9_.+$()[\]{}|^*?\\/-]{1,8}$/)
  const fields = fc.uniqueArray(fc.tuple(name, fc.constantFrom<RangeFieldType>('string', 'integer')), { minLength: 1, maxLength: 4, selector: ([field]) => field })
  fc.assert(fc.property(fields.chain((list) => fc.tuple(fc.constant(grammarOf(list)), fc.stringMatching(regex(rangePattern(grammarOf(list)))))),
    ([grammar, header]) => {
      const range = parseRange(header, grammar)
      if (!grammar.has(range.field)) throw new Error(`${header}: no field of the grammar`)
    }), { numRuns: propertyRuns(300), seed: SEED })
  t.pass(`${propertyRuns(300)} sets of fields, a Range of each`)
})

t.test('each route\'s pattern: its strings are Ranges the route\'s grammar accepts', async (t) => {
  const colors = rangeable([{ name: 'Aqua', hex: '#00ffff', rgb: 510 }], {
    name: { type: 'string', value: (color) => color.name },
    hex: { type: 'string', value: (color) => color.hex },
    rgb: { type: 'integer', value: (color) => color.rgb }
  })
  t.equal(colors.pattern, rangePattern(COLORS), 'a rangeable collection\'s pattern is its fields\'')
  fc.assert(fc.property(fc.stringMatching(regex(colors.pattern)), (header) => { colors.select(header) }), { numRuns: propertyRuns(3000), seed: SEED })
  fc.assert(fc.property(fc.stringMatching(regex(ID_RANGE_PATTERN)), (header) => { parseIdRange(header) }), { numRuns: propertyRuns(3000), seed: SEED })
  t.pass(`${propertyRuns(3000)} Ranges of each pattern accepted`)
})

t.test('a value\'s percent-encoding: the pattern takes exactly the UTF-8 that the grammar decodes', async (t) => {
  const pattern = regex(rangePattern(COLORS))
  // Up to four bytes, each percent-encoded: the pattern and decodeURIComponent agree on every one.
  const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 })
  fc.assert(fc.property(bytes, fc.boolean(), (values, upper) => {
    const encoded = values.map((byte) => '%' + byte.toString(16).padStart(2, '0')).join('')
    const value = upper ? encoded.toUpperCase() : encoded
    let decodes = true
    try {
      parseRange(`name ${value}`, COLORS)
    } catch {
      decodes = false
    }
    if (pattern.test(`name ${value}`) !== decodes) throw new Error(`${value}: the grammar ${decodes ? 'decodes' : 'refuses'} it, the pattern does not`)
  }), { numRuns: propertyRuns(20_000), seed: SEED })
  t.pass(`${propertyRuns(20_000)} byte sequences`)
})

t.test('the examples of docs/contract.md match the pattern; near misses do not, and the grammar refuses them', async (t) => {
  const colors = regex(rangePattern(COLORS))
  for (const header of ['name', 'name; limit 2', 'name Green; order asc; offset 1', 'hex %23808080; limit 2', 'hex #808080',
    'rgb 255; order asc', 'rgb -5', 'rgb +7', 'name %C3%A9; limit 3', 'name Tan%3Bx', '  name   Green ;  limit 3  ',
    'name;limit 3;offset 2;order asc', 'name White;limit 2;offset 1;order desc', 'name; limit +3; offset 007', 'rgb 999999999999999']) {
    t.ok(colors.test(header), `${JSON.stringify(header)} matches`)
    t.doesNotThrow(() => parseRange(header, COLORS))
  }
  const nearMisses: Array<[string, string]> = [
    ['colour', 'an unknown field'],
    ['Name', 'a field in another case'],
    ['name; limit -1', 'a negative limit'],
    ['name; offset -1', 'a negative offset'],
    ['rgb 9007199254740992', 'a value out of the safe range'],
    ['rgb 1.5', 'a value that is no integer'],
    ['name; order ASC', 'an order in upper case'],
    ['name; limit', 'an option without its argument'],
    ['name;', 'an empty option'],
    ['', 'an empty header'],
    ['name Dark Z', 'a third token'],
    ['name %FF', 'a value that is not UTF-8'],
    ['name %ED%A0%80', 'a surrogate, encoded']
  ]
  for (const [header, what] of nearMisses) {
    t.notOk(colors.test(header), `${what}: ${JSON.stringify(header)} does not match`)
    t.throws(() => parseRange(header, COLORS), { statusCode: 400, message: /^(Invalid Range|Limit must|Offset must)/ }, 'and the grammar refuses it')
  }
  const id = regex(ID_RANGE_PATTERN)
  for (const header of ['id', 'id; limit 2', 'id 2; limit 1', 'id; order desc; limit 1', 'id -3', 'id 2;limit 2;offset 1;order asc']) {
    t.ok(id.test(header), `${JSON.stringify(header)} matches`)
  }
  for (const header of ['name', 'id; limit -1', 'id 9007199254740992', 'id abc', 'id; order ASC', 'id %31']) {
    t.notOk(id.test(header), `${JSON.stringify(header)} does not match`)
  }
  t.throws(() => parseIdRange('id 9007199254740992'), { code: 'API_ERR_RANGE_VALUE' })
})

t.test('what the pattern leaves out, the grammar still takes: the pattern is a subset', async (t) => {
  const colors = regex(rangePattern(COLORS))
  for (const header of ['name; foo 3', 'rgb 9007199254740991', 'name; limit -0', 'rgb %31', 'name é', 'name a\tb']) {
    t.notOk(colors.test(header), `${JSON.stringify(header)} does not match`)
    t.doesNotThrow(() => parseRange(header, COLORS), 'the grammar takes it')
  }
})

t.test('each row of UTF-8\'s table (RFC 3629), at its ends: the pattern takes it, in either case; its overlong and out-of-range neighbours, neither', async (t) => {
  const colors = regex(rangePattern(COLORS))
  const ends = [0x7f, 0x80, 0x7ff, 0x800, 0xfff, 0x1000, 0xcfff, 0xd000, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff]
  for (const code of ends) {
    const encoded = encodeURIComponent(String.fromCodePoint(code))
    for (const value of [encoded, encoded.toLowerCase()]) {
      t.ok(colors.test(`name ${value}`), `U+${code.toString(16)}: ${value}`)
      t.doesNotThrow(() => parseRange(`name ${value}`, COLORS))
    }
  }
  // Overlong forms of U+07FF, U+FFFF; a surrogate; past U+10FFFF.
  for (const value of ['%C1%BF', '%E0%9F%BF', '%F0%8F%BF%BF', '%ED%A0%80', '%ED%BF%BF', '%F4%90%80%80', '%F5%80%80%80']) {
    t.notOk(colors.test(`name ${value}`), `${value} does not match`)
    t.throws(() => parseRange(`name ${value}`, COLORS), { statusCode: 400, message: /^Invalid Range/ }, 'and the grammar refuses it')
  }
})
