import t from 'tap'
import { canAnswerBadRequest, forbiddenKey, formFields, isFormFields, lowerCaseNames, parseForm, parseWireInteger, wireDecoder } from '../../lib/wire.js'

// Values on the wire (lib/wire.ts, docs/contract.md "Values on the wire"), decoded without a
// server: test/plugins/validation.test.ts holds what a request gets from them.

t.test('parseWireInteger: an optional sign and decimal digits within the safe range, nothing else', async (t) => {
  const good: Array<[string, number]> = [['1', 1], ['12', 12], ['-3', -3], ['+4', 4], ['007', 7], ['0', 0],
    ['9007199254740991', Number.MAX_SAFE_INTEGER], ['-9007199254740991', Number.MIN_SAFE_INTEGER]]
  for (const [text, value] of good) t.equal(parseWireInteger(text), value, text)
  t.ok(Object.is(parseWireInteger('-0'), 0), '-0 is 0')
  for (const text of ['', ' 1', '1 ', '1.5', '1e3', '0x10', '1a', 'a1', '--1', '+', '-', '9007199254740992', '-9007199254740992', 'Infinity']) {
    t.equal(parseWireInteger(text), undefined, JSON.stringify(text))
  }
})

/** The error a value refused on the wire gives: Ajv's shape, at `path`. */
const wireError = (path: string, type: string, message: string) =>
  ({ error: [{ instancePath: path, schemaPath: '#/type', keyword: 'type', params: { type }, message }] })

t.test('wireDecoder: scalars by their JSON type, each refusal in Ajv\'s shape', async (t) => {
  const decode = wireDecoder({
    type: 'object',
    properties: {
      n: { type: 'integer' },
      low: { type: 'integer', minimum: -5, maximum: 1e300 },
      high: { type: 'integer', minimum: -1e300, maximum: 10 },
      x: { type: 'number' },
      on: { type: 'boolean' },
      s: { type: 'string' },
      either: { type: ['string', 'null'] },
      list: { type: ['integer'] }
    }
  }, false)
  t.same(decode({ n: '-12', x: '1.5', on: 'true', s: '007', either: '1' }), { value: { n: -12, x: 1.5, on: true, s: '007', either: '1' } }, 'text that is not a number stays text')
  t.same(decode({ on: 'false' }), { value: { on: false } })
  t.strictSame(decode({ list: '1' }), { value: { list: '1' } }, 'a list of types is left to the validator')
  t.same(decode({ n: ['3', 'x'] }), { value: { n: 3 } }, 'a repeated parameter: the first occurrence')
  t.same(decode({ s: ['a', 'b'] }), { value: { s: 'a' } }, 'of a string too')
  t.same(decode(null), { value: {} }, 'no data: nothing to decode')
  t.same(decode({ n: '1.5' }), wireError('/n', 'integer', `must be a decimal integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`))
  t.same(decode({ low: 'a' }), wireError('/low', 'integer', `must be a decimal integer between -5 and ${Number.MAX_SAFE_INTEGER}`), 'the schema\'s bounds, within the safe range')
  t.same(decode({ high: 'a' }), wireError('/high', 'integer', `must be a decimal integer between ${Number.MIN_SAFE_INTEGER} and 10`))
  t.same(decode({ on: 'TRUE' }), wireError('/on', 'boolean', 'must be true or false'))
  t.same(decode({ on: '1' }), wireError('/on', 'boolean', 'must be true or false'))
  t.same(decode({ n: '1', on: 'yes', x: 'no' }), wireError('/x', 'number', 'must be a decimal number'), 'the first refusal, in the schema\'s order')
})

t.test('wireDecoder: a number is decimal, with a fraction and an exponent, and finite', async (t) => {
  const decode = wireDecoder({ type: 'object', properties: { x: { type: 'number' } } }, false)
  const good: Array<[string, number]> = [['1', 1], ['-1.5', -1.5], ['+.5', 0.5], ['1.', 1], ['1e3', 1000], ['1E-3', 0.001],
    ['.5e+2', 50], ['.25', 0.25], ['1e10', 1e10], ['2.5E+12', 2.5e12], ['12.25', 12.25], ['007', 7]]
  for (const [text, value] of good) t.same(decode({ x: text }), { value: { x: value } }, text)
  for (const text of ['', ' 1', '1 ', '.', 'e3', '1e', '1e+', 'Infinity', '-Infinity', 'NaN', '0x10', '0b1', '--1', '1.2.3', '1e999', '1_000']) {
    t.same(decode({ x: text }), wireError('/x', 'number', 'must be a decimal number'), JSON.stringify(text))
  }
})

t.test('wireDecoder: a list takes every occurrence in order, none is the empty list; an item refused names its index', async (t) => {
  const decode = wireDecoder({ type: 'object', properties: { tag: { type: 'array', items: { type: 'integer' } }, any: { type: 'array' } } }, false)
  t.same(decode({}), { value: { tag: [], any: [] } })
  t.same(decode({ tag: '7' }), { value: { tag: [7], any: [] } }, 'one occurrence')
  t.same(decode({ tag: ['1', '-2', '3'], any: ['a', '1'] }), { value: { tag: [1, -2, 3], any: ['a', '1'] } }, 'items without a schema stay text')
  t.same(decode({ tag: ['1', 'x', 'y'] }), wireError('/tag/1', 'integer', `must be a decimal integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`))
})

t.test('wireDecoder: in place, or on a copy that is made once and only when a value changes', async (t) => {
  const schema = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' }, s: { type: 'string' } } }
  const data = { a: '1', b: '2', s: 'x' }
  const inPlace = wireDecoder(schema, false)(data)
  t.strictSame(inPlace, { value: { a: 1, b: 2, s: 'x' } })
  t.equal((inPlace as { value: unknown }).value, data, 'decoded in place')

  const headers = { a: '1', b: '2', s: 'x' }
  const copied = wireDecoder(schema, true)(headers)
  t.strictSame(copied, { value: { a: 1, b: 2, s: 'x' } }, 'both values changed on the one copy')
  t.strictSame(headers, { a: '1', b: '2', s: 'x' }, 'the headers as they came')
  const unchanged = { s: 'x', other: 'y' }
  t.equal((wireDecoder(schema, true)(unchanged) as { value: unknown }).value, unchanged, 'nothing changed: no copy')
  t.same(wireDecoder({}, true)({ a: '1' }), { value: { a: '1' } }, 'a schema without properties decodes nothing')
})

t.test('form fields: marked, and only they', async (t) => {
  const fields = formFields({ a: '1' })
  t.ok(isFormFields(fields))
  t.same(Object.keys(fields), ['a'], 'the mark is no field')
  for (const data of [{ a: '1' }, null, undefined, 'a=1', 1]) t.notOk(isFormFields(data), JSON.stringify(data))
  const form = parseForm('a=1&b=2;c=3&a=x%3D')
  t.ok(isFormFields(form))
  t.same({ ...form }, { a: ['1', 'x='], b: '2;c=3' }, 'pairs split at & and =, nowhere else')
  t.equal(Object.keys(parseForm(Array.from({ length: 1500 }, (_, i) => `k${i}=${i}`).join('&'))).length, 1500, 'every pair: none dropped past 1,000')
})

t.test('lowerCaseNames: a headers schema\'s names in lower case, required ones too, the rest as it was', async (t) => {
  t.same(lowerCaseNames({ type: 'object', properties: { 'X-Count': { type: 'integer' }, accept: { type: 'string' } }, required: ['X-Count'], additionalProperties: true }),
    { type: 'object', properties: { 'x-count': { type: 'integer' }, accept: { type: 'string' } }, required: ['x-count'], additionalProperties: true })
  t.same(lowerCaseNames({ type: 'object' }), { type: 'object', properties: {} }, 'no required list is added')
})

t.test('canAnswerBadRequest: captures, a body, or a query string or headers that can refuse', async (t) => {
  const query = (properties: Record<string, object>, required?: string[]) => ({ querystring: { type: 'object', properties, ...(required === undefined ? {} : { required }) } })
  t.equal(canAnswerBadRequest('/users/:id', undefined), true, 'a capture')
  t.equal(canAnswerBadRequest('/files/*', undefined), true, 'a wildcard')
  t.equal(canAnswerBadRequest('/users', undefined), false, 'nothing to refuse')
  t.equal(canAnswerBadRequest('/users', {}), false)
  t.equal(canAnswerBadRequest('/users', { body: { type: 'object' } }), true, 'a body')
  t.equal(canAnswerBadRequest('/users', { querystring: { type: 'object' } }), false, 'a query string without parameters')
  t.equal(canAnswerBadRequest('/users', query({ q: { type: 'string', description: 'd', examples: ['e'], title: 't', default: 'x' } })), false,
    'an optional string with annotations only')
  t.equal(canAnswerBadRequest('/users', query({ q: { type: 'string' } }, [])), false, 'an empty required list')
  t.equal(canAnswerBadRequest('/users', query({ q: { type: 'string' } }, ['q'])), true, 'a required parameter')
  t.equal(canAnswerBadRequest('/users', query({ q: { type: 'string', maxLength: 3 } })), true, 'a constrained string')
  t.equal(canAnswerBadRequest('/users', query({ q: { type: 'string' }, n: { type: 'integer' } })), true, 'an integer')
  t.equal(canAnswerBadRequest('/users', { headers: { type: 'object', properties: { 'x-n': { type: 'integer' } } } }), true, 'a header')
  t.equal(canAnswerBadRequest('/users', { headers: { type: 'object', properties: { 'x-s': { type: 'string' } } } }), false)
})

t.test('forbiddenKey: an own __proto__, or a constructor that holds a prototype, at any depth', async (t) => {
  const parse = (text: string) => JSON.parse(text) as unknown
  t.equal(forbiddenKey(parse('{"__proto__":{}}')), 'body/__proto__')
  t.equal(forbiddenKey(parse('{"constructor":{"prototype":{}}}')), 'body/constructor/prototype')
  t.equal(forbiddenKey(parse('{"user":{"a":1,"__proto__":1}}')), 'body/user/__proto__')
  t.equal(forbiddenKey(parse('{"list":[1,{"constructor":{"prototype":null}}]}'), 'form'), 'form/list/1/constructor/prototype')
  t.equal(forbiddenKey(parse('{"a":{"b":{}},"c":{"__proto__":1}}')), 'body/c/__proto__', 'found after a child without one')
  for (const text of ['null', '1', '"__proto__"', '{}', '[]', '{"a":{"b":[1,null]}}', '{"constructor":"x"}', '{"constructor":null}',
    '{"constructor":{"a":1}}', '{"prototype":{}}', '{"a":{"constructor":{}}}']) {
    t.equal(forbiddenKey(parse(text)), undefined, text)
  }
})
