import t from 'tap'
import fc from 'fast-check'
import { createApiClient, parseContentRange, parseRangeHeader, rangeFields, rangeHeader, type Pageable } from '../../client/index.js'
import { contentRangeHeader, nextRangeHeader, parseRange, type RangeFieldGrammar } from '../../lib/range/grammar.js'
import { baseUrl, build } from '../helpers/index.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

// The client's table of the operations that page by Range (client/range.ts) held to the service:
// the same operations, fields and value types; and its reading of the service's headers.

interface Document { paths: Record<string, Record<string, { parameters?: Array<{ in: string, name: string }>, responses: Record<string, { headers?: Record<string, unknown> }> }>> }

t.test('the pageable operations are those whose pages the document declares, with the fields the service accepts', async (t) => {
  const server = await build(t, { API_TOKENS: 'token', BASIC_AUTH_USERS: 'servant:server' })
  const document = JSON.parse((await server.inject({ url: '/openapi.json' })).body) as Document
  const paged = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([, operation]) => operation.responses['206']?.headers?.['Next-Range'] !== undefined)
    .map(([method]) => `${method.toUpperCase()} ${path}`))
  t.same(paged.sort(), Object.keys(rangeFields).sort(), 'the operations with Next-Range on their 206')
  await server.listen({ host: '127.0.0.1', port: 0 })
  const api = createApiClient({ baseUrl: baseUrl(server), credentials: { basic: { username: 'servant', password: 'server' }, bearer: 'token' } })
  for (const operation of Object.keys(rangeFields) as Pageable[]) {
    const fields: Readonly<Record<string, string>> = rangeFields[operation]
    const page = await api.page(operation)
    t.equal(page.response.headers.get('accept-ranges'), Object.keys(fields).join(','), `${operation}: Accept-Ranges lists the fields`)
    for (const [field, type] of Object.entries(fields)) {
      const path = operation.split(' ')[1] as string
      const text = await server.inject({ url: path, headers: { range: `${field} x`, authorization: 'Basic c2VydmFudDpzZXJ2ZXI=' } })
      t.equal(text.statusCode, type === 'integer' ? 400 : 206, `${operation}: ${field} is ${type === 'integer' ? 'an integer' : 'a string'}`)
    }
  }
})

/** The grammar of a route's fields, as lib/range/grammar.ts takes it. */
function grammarOf (operation: Pageable): Map<string, RangeFieldGrammar> {
  const fields: Readonly<Record<string, 'string' | 'integer'>> = rangeFields[operation]
  return new Map(Object.entries(fields).map(([field, type]) => [field, { type, defaults: { limit: 100, offset: 0, order: 'desc' } }]))
}

t.test('the client reads back every Next-Range and Content-Range the service writes, and writes Ranges the service reads', async (t) => {
  const operations = Object.keys(rangeFields) as Pageable[]
  // An empty value is no value: `name ;limit 1` is the range of every name.
  const valueOf = (type: string): fc.Arbitrary<string | number> => type === 'integer' ? fc.maxSafeInteger().chain((n) => fc.constantFrom(n, -n)) : fc.string({ unit: 'binary', minLength: 1 })
  const ranges = fc.constantFrom(...operations).chain((operation) => {
    const fields: Readonly<Record<string, string>> = rangeFields[operation]
    return fc.constantFrom(...Object.entries(fields)).chain(([field, type]) => fc.record({
      operation: fc.constant(operation),
      field: fc.constant(field),
      value: fc.option(valueOf(type), { nil: undefined }),
      first: valueOf(type),
      last: valueOf(type),
      limit: fc.nat(),
      offset: fc.nat(),
      order: fc.constantFrom('asc' as const, 'desc' as const)
    }))
  })
  fc.assert(fc.property(ranges, ({ operation, field, value, first, last, limit, offset, order }) => {
    // A lone surrogate has no UTF-8 form: the service writes U+FFFD for it.
    const wellFormed = (text: string | number | undefined) => typeof text === 'string' ? text.replace(/\p{Cs}/gu, '\uFFFD') : text
    const range = { field, limit, offset, order, ...(value === undefined ? {} : { value: wellFormed(value) }) }
    t.same(parseRangeHeader(operation, nextRangeHeader(range)), range)
    if (typeof first === 'string' && (first.includes('..') || first.endsWith('.'))) return
    t.same(parseContentRange(operation, contentRangeHeader(field, first, last)), { field, first: wellFormed(first), last: wellFormed(last) })
    t.same(parseRange(rangeHeader(range), grammarOf(operation)), range, 'the service reads what the client writes')
  }), { numRuns: propertyRuns(300), seed: SEED })
  t.equal(rangeHeader({ field: 'id' }), 'id', 'options left out are not written')
  t.equal(rangeHeader({ field: 'id', offset: 0 }), 'id; offset 0')
  t.equal(rangeHeader({ field: 'id', order: 'asc' }), 'id; order asc')
  t.equal(rangeHeader({ field: 'name', value: 'Light Blue', limit: 5 }), 'name Light%20Blue; limit 5')
  t.same(parseRangeHeader('GET /users', '  id  7 ;  limit  2 ; order desc '), { field: 'id', value: 7, limit: 2, order: 'desc' }, 'spaces around tokens')
  t.same(parseRangeHeader('GET /colors', 'name'), { field: 'name' }, 'a field alone')
  for (const [header, why] of <Array<[string, string]>>[['id 1e3', 'an exponent'], ['id 0x10', 'hexadecimal'], ['id 1;limit 1e3', 'a limit with an exponent'], ['id 1;offset +1', 'a signed offset'],
    ['id 9007199254740992', 'past the safe integers'], ['id 1;foo bar', 'an unknown option'], ['id 1;order', 'an order without its argument']]) {
    t.throws(() => parseRangeHeader('GET /users', header), SyntaxError, why)
  }
  t.throws(() => parseRangeHeader('GET /users', 'id x'), { name: 'SyntaxError', message: '"x" is not an integer' })
  t.throws(() => parseRangeHeader('GET /users', 'id;limit -1'), { name: 'SyntaxError', message: 'limit "-1" is not a count' })
  t.throws(() => parseContentRange('GET /colors', 'name Yellow'), { name: 'SyntaxError', message: '"name Yellow" is not "<field> <first>..<last>"' }, 'no ..')
  t.throws(() => parseContentRange('GET /colors', 'name'), SyntaxError, 'no values')
  t.same(parseContentRange('GET /colors', 'name a.b..c..d'), { field: 'name', first: 'a.b', last: 'c..d' }, 'split at the first ..')
  t.throws(() => parseRangeHeader('GET /users', 'name 1'), SyntaxError, 'not a field of the route')
  t.throws(() => parseRangeHeader('GET /users', 'id 1 2'), SyntaxError, 'two values')
  t.throws(() => parseRangeHeader('GET /users', 'id 1;limit'), SyntaxError, 'an option without its argument')
  t.throws(() => parseRangeHeader('GET /users', 'id 1;order up'), SyntaxError, 'an order that is none')
  t.throws(() => parseRangeHeader('GET /users', 'id 1;limit 1 2'), SyntaxError, 'an option with two arguments')
  t.throws(() => parseRangeHeader('GET /users', 'id 1.5'), SyntaxError, 'an id that is not an integer')
  t.throws(() => parseRangeHeader('GET /colors', 'name %E0'), URIError, 'a value that is not percent-encoded UTF-8')
})
