import t, { type Test } from 'tap'
import fc from 'fast-check'
import { RETURN_PREFERENCES } from '../../schemas/collection.js'
import { build, json } from '../helpers/index.js'
import type { Document, Operation } from '../helpers/openapi-requests.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

// What the OpenAPI document says of the Range and Prefer headers, held against what the service
// answers: a Range of the pattern is a page, one outside it the grammar's own 400 (the pattern is
// the document's only, not the validator's); a Prefer of the enum is acted on, another ignored.

const SERVANT = `Basic ${Buffer.from('servant:server').toString('base64')}`
/** Strings of each pattern sent to its route. */
const RUNS = propertyRuns(150)

/** The operations that page by Range, by path (GET). */
const PAGED: Record<string, string> = {
  '/colors': 'getColors',
  '/users': 'getUsers',
  '/products': 'getProducts',
  '/users/list-all': 'getUsersListAll',
  '/users/list-all/now': 'getUsersListAllNow',
  '/list-all/users': 'getListAllUsers'
}

interface HeaderParameter { name: string, in: string, description?: string, schema: { pattern?: string, enum?: string[] }, examples?: Record<string, { value: string }> }
const parameter = (operation: Operation | undefined, name: string) =>
  operation?.parameters?.find((candidate) => candidate.in === 'header' && candidate.name === name) as HeaderParameter | undefined

async function documentOf (t: Test) {
  const server = await build(t)
  const document = json<Document>(await server.inject({ url: '/openapi.json' }))
  return { server, document }
}

t.test('a Range pattern on every paged operation, and only there; its examples match it', async (t) => {
  const { document } = await documentOf(t)
  const patterned = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([, operation]) => parameter(operation, 'Range')?.schema.pattern !== undefined)
    .map(([method, operation]) => `${method} ${path} ${operation.operationId}`))
  t.same(patterned.sort(), Object.entries(PAGED).map(([path, operationId]) => `get ${path} ${operationId}`).sort())
  for (const path of Object.keys(PAGED)) {
    const range = parameter(document.paths[path]?.get, 'Range')!
    const pattern = new RegExp(range.schema.pattern!, 'u')
    const examples = Object.values(range.examples ?? {}).map(({ value }) => value)
    t.ok(examples.length >= 4, `${path}: examples`)
    t.same(examples.filter((example) => !pattern.test(example)), [], `${path}: every example matches the pattern`)
    t.match(range.description, /A malformed value is a 400; the pattern of the OpenAPI document matches well-formed values only/, `${path}: the description says what the pattern is`)
  }
})

t.test('every Range of a route\'s pattern is a page of that route', async (t) => {
  const { server, document } = await documentOf(t)
  for (const [path, operationId] of Object.entries(PAGED)) {
    const pattern = new RegExp(parameter(document.paths[path]?.get, 'Range')!.schema.pattern!, 'u')
    const statuses = new Set<number>()
    await fc.assert(fc.asyncProperty(fc.stringMatching(pattern), async (range) => {
      const res = await server.inject({ url: path, headers: { range, authorization: SERVANT } })
      statuses.add(res.statusCode)
      if (res.statusCode !== 206) throw new Error(`${path} Range ${JSON.stringify(range)} → ${res.statusCode}: ${res.body}`)
    }), { numRuns: RUNS, seed: SEED })
    t.same([...statuses], [206], `${operationId}: ${RUNS} Ranges of its pattern, each a page`)
  }
})

t.test('near misses do not match the pattern, and are refused by the grammar with its own codes and messages', async (t) => {
  const { server, document } = await documentOf(t)
  const field = (path: string) => path === '/colors' ? 'rgb' : 'id'
  for (const path of Object.keys(PAGED)) {
    const pattern = new RegExp(parameter(document.paths[path]?.get, 'Range')!.schema.pattern!, 'u')
    const misses: Array<[string, string, RegExp]> = [
      ['colour; limit 2', 'API_ERR_RANGE_INVALID', /^Invalid Range: unknown field "colour"; the fields are /],
      [`${field(path)}; limit -1`, 'API_ERR_RANGE_LIMIT', /^Limit must be non-negative: the Range header has limit -1$/],
      [`${field(path)}; offset -2`, 'API_ERR_RANGE_OFFSET', /^Offset must be non-negative: the Range header has offset -2$/],
      [`${field(path)} 9007199254740992`, 'API_ERR_RANGE_VALUE', /^Invalid Range Value: the \w+ value must be a decimal integer between -9007199254740991 and 9007199254740991, got "9007199254740992"$/],
      [`${field(path)}; order ASC`, 'API_ERR_RANGE_ORDER', /^Invalid Range Order: order must be asc or desc \(lower case\), got "ASC"$/],
      [`${field(path)}; limit two`, 'API_ERR_RANGE_OPTIONS', /^Invalid Range Options: limit must be a decimal integer/]
    ]
    for (const [range, code, message] of misses) {
      t.notOk(pattern.test(range), `${path}: ${JSON.stringify(range)} does not match`)
      const res = await server.inject({ url: path, headers: { range, authorization: SERVANT } })
      t.equal(res.statusCode, 400)
      t.equal(json(res).code, code, `${path}: ${JSON.stringify(range)} is ${code}`)
      t.match(json(res).message, message)
    }
  }
})

t.test('Prefer: the document lists the preferences that work; any other is ignored, not refused (RFC 7240)', async (t) => {
  const { server, document } = await documentOf(t)
  const writes = Object.values(document.paths).flatMap((item) => Object.values(item)).filter((operation) => parameter(operation, 'Prefer') !== undefined)
  t.same(writes.map((operation) => operation.operationId).sort(), ['postProducts', 'postUsers', 'putProductsById', 'putUsersById'])
  for (const operation of writes) {
    const prefer = parameter(operation, 'Prefer')!
    t.same(prefer.schema.enum, [...RETURN_PREFERENCES], `${operation.operationId}: the enum`)
    t.same(Object.values(prefer.examples ?? {}).map(({ value }) => value).filter((value) => !RETURN_PREFERENCES.includes(value as never)), [], 'its examples are of the enum')
  }
  const user = { name: 'Ada', age: 36, email: 'ada@example.com', registration_date: '1815-12-10' }
  const post = (prefer: string) => server.inject({ method: 'POST', url: '/users', headers: { prefer }, payload: user })
  const representation = await post('return=representation')
  t.equal(representation.statusCode, 201)
  t.equal(representation.headers['preference-applied'], 'return=representation')
  const minimal = await post('return=minimal')
  t.equal(minimal.statusCode, 204)
  t.equal(minimal.headers['preference-applied'], 'return=minimal')
  for (const prefer of ['respond-async', 'return=everything', 'handling=lenient, wait=5']) {
    const res = await post(prefer)
    t.equal(res.statusCode, 204, `${prefer}: ignored, as RFC 7240 has it`)
    t.equal(res.headers['preference-applied'], undefined)
  }
})
