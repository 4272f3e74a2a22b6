import t from 'tap'
import fc from 'fast-check'
import { build, documentConformance, uncheckedInject } from '../helpers/index.js'
import { conformanceCounts } from '../helpers/openapi-conformance.js'
import { requestGenerator, type Document, type GeneratedRequest, type Operation } from '../helpers/openapi-requests.js'
import { SEED, propertyRuns } from '../helpers/property-runs.js'

/** Requests per operation, valid and invalid: in the loop, enough for every answer `reached` below asks for. */
const RUNS = propertyRuns(500, 200)
/** Small enough that a generated body goes over it now and then (413). */
const BODY_LIMIT = 4096
const credentials = { basic: 'servant:server', bearer: 'secret-token' }

/**
 * The 4xx a request the document calls valid may still get: they depend on what the server holds,
 * not on the request (no such item, or file; a byte range past the end of the file).
 */
const STATEFUL = new Set([404, 416])

/** The operations that page by a Range of their own grammar, its pattern in the document. */
const PAGED = ['getColors', 'getUsers', 'getProducts', 'getUsersListAll', 'getUsersListAllNow', 'getListAllUsers']

/** A request's header, whatever the case of its name. */
const headerOf = (request: GeneratedRequest, name: string) =>
  Object.entries(request.headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]

/**
 * What the document says is refused in words, where OpenAPI has no keyword for it: a Range
 * together with sortby on GET /users (each is valid alone). The description of the Range
 * parameter says so (checked below).
 */
const refusedInWords = (operationId: string, request: GeneratedRequest) =>
  operationId === 'getUsers' && headerOf(request, 'Range') !== undefined && /[?&]sortby=/.test(request.url)

/** The pattern the document gives the operation's Range header, if any. */
function rangePattern (operation: Operation): RegExp | undefined {
  const pattern = operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Range')?.schema.pattern
  return pattern === undefined ? undefined : new RegExp(pattern, 'u')
}

/**
 * Check 4b: requests generated from the document's own parameter and body schemas (fast-check),
 * valid and invalid, RUNS per operation, sent with inject: every answer is a documented status
 * whose headers and body match the document (the checker of 4a), never a 5xx but where the
 * document's only answer is one (GET /failing, by contract). A request the document calls valid
 * gets no 4xx but those that depend on what the server holds (STATEFUL), as Schemathesis's
 * positive data acceptance asks; with a Range of its pattern, a page or the list. Bearer tokens
 * are on, so that both schemes are exercised.
 */
t.test('generated requests: every answer is documented, none is a 5xx, and a valid request is answered', async (t) => {
  // No limit on failed authentications: the generated credentials fail often, and past the limit
  // every protected request would be a 429 (tested in test/plugins/rate-limit.test.ts).
  const env = { API_TOKENS: credentials.bearer, BODY_LIMIT: String(BODY_LIMIT), AUTH_FAILURE_LIMIT: '0', AUTH_FAILURE_ADDRESS_LIMIT: '0' }
  const server = await build(t, env)
  const document = JSON.parse((await server.inject({ url: '/openapi.json' })).body) as Document
  const { check } = await documentConformance(server)
  // Checked here, once, so that a mismatch fails the property (and fast-check shrinks it).
  const inject = uncheckedInject(server)
  // Streaming 10,000,000 users is the contract, and tested in test/routes/userStream.test.ts; here it would take minutes.
  const requestsOf = requestGenerator(document, credentials, { 'getUserStream.count': 1000 })
  let sent = 0
  const statuses = new Map<string, Set<number>>()
  /** By operation: how many requests were valid, and the statuses of those with a Range of the pattern. */
  const validCounts = new Map<string, number>()
  const patternRanges = new Map<string, Set<number>>()
  /** By operation: the codes of the 400s answered to a Range the pattern refuses. */
  const rangeRefusals = new Map<string, Set<string>>()

  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const seen = new Set<number>()
      statuses.set(operation.operationId, seen)
      // An operation that never succeeds (GET /failing) answers its documented 5xx by contract.
      const fiveHundreds = !Object.keys(operation.responses).some((status) => status.startsWith('2'))
      const pattern = rangePattern(operation)
      const { operationId } = operation
      await fc.assert(fc.asyncProperty(requestsOf(method, path), async (request) => {
        sent++
        const res = await inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.body === undefined ? {} : { payload: request.body }) })
        seen.add(res.statusCode)
        const mismatches = check(request.method, res.raw.req.url ?? request.url, res)
        const fail = (why: string) => new Error(`${request.method} ${request.url} ${JSON.stringify(request.headers)} → ${res.statusCode}: ${why}\n${res.body.slice(0, 300)}`)
        if (mismatches === undefined || mismatches.length > 0 || (res.statusCode >= 500 && !fiveHundreds)) {
          throw fail(mismatches?.join('; ') ?? 'no operation')
        }
        const range = headerOf(request, 'Range')
        const valid = request.valid && !refusedInWords(operationId, request)
        if (valid) {
          validCounts.set(operationId, (validCounts.get(operationId) ?? 0) + 1)
          if (res.statusCode >= 400 && res.statusCode < 500 && !STATEFUL.has(res.statusCode)) throw fail('a request the document calls valid, refused')
          if (pattern !== undefined && range !== undefined) {
            if (!pattern.test(range)) throw fail('a valid request whose Range the pattern refuses: the generator is wrong')
            if (res.statusCode !== 200 && res.statusCode !== 206) throw fail('a Range of the pattern, not answered 200 or 206')
            add(patternRanges, operationId, res.statusCode)
          }
        }
        if (pattern !== undefined && range !== undefined && !pattern.test(range) && res.statusCode === 400) {
          const { code, message } = JSON.parse(res.body) as { code?: string, message: string }
          // The pattern is the document's only: the validator never answers for the Range.
          if (/headers\/range/i.test(message)) throw fail('the validator refused the Range')
          add(rangeRefusals, operationId, String(code))
        }
        conformanceCounts.validated++
      }), { numRuns: RUNS, seed: SEED })
    }
  }
  t.ok(statuses.size >= 30, `operations: ${statuses.size}`)
  t.ok(sent >= RUNS * statuses.size, `requests sent: ${sent}`)
  t.comment(`generated requests: ${sent} over ${statuses.size} operations`)
  // The generation reaches the answers that matter, valid and invalid: not only 400s.
  const reached = (operationId: string, expected: number[]) => {
    const seen = statuses.get(operationId) ?? new Set()
    t.same(expected.filter((status) => !seen.has(status)), [], `${operationId} answered ${[...seen].sort().join(', ')}`)
  }
  reached('getPosition', [200, 400, 406])
  reached('postMarketing', [200, 400, 406, 413, 415])
  reached('getColors', [206, 400, 406])
  reached('getUsersListAll', [200, 401, 406])
  reached('postProducts', [201, 204, 400, 401, 406, 413, 415])
  reached('putUsersById', [200, 204, 400, 404, 406, 413, 415])
  reached('getStatic', [200, 206, 304, 404, 416])
  reached('getUserStream', [200, 400, 406])
  reached('getB', [200, 400, 406, 413, 415])

  // Valid requests are a good share of every operation's (a fifth at least), so that the property above says something.
  const fewValid = [...statuses.keys()].filter((operationId) => (validCounts.get(operationId) ?? 0) < RUNS / 5)
  t.same(fewValid, [], `valid requests: ${[...validCounts.values()].reduce((sum, count) => sum + count, 0)} of ${sent}`)
  // A Range of the pattern is a page (206) on every paged operation; one the pattern refuses is
  // still generated, and refused with the grammar's own codes, not the validator's.
  for (const operationId of PAGED) {
    t.ok(patternRanges.get(operationId)?.has(206), `${operationId}: a Range of the pattern answered ${[...patternRanges.get(operationId) ?? []].join(', ')}`)
    const codes = [...rangeRefusals.get(operationId) ?? []]
    t.ok(codes.some((code) => code.startsWith('API_ERR_RANGE_')), `${operationId}: a Range the pattern refuses answered 400 ${codes.sort().join(', ')}`)
  }
  const usersRange = document.paths['/users']?.get?.parameters?.find((parameter) => parameter.name === 'Range') as { description?: string } | undefined
  t.match(usersRange?.description, /A Range with sortby is a 400 too/, 'the document says in words what refusedInWords() excuses')
})

function add<T> (map: Map<string, Set<T>>, key: string, value: T): void {
  let set = map.get(key)
  if (set === undefined) map.set(key, set = new Set())
  set.add(value)
}
