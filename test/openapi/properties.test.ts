import t from 'tap'
import fc from 'fast-check'
import { build, documentConformance, uncheckedInject } from '../helpers/index.js'
import { conformanceCounts } from '../helpers/openapi-conformance.js'
import { requestGenerator, type Document } from '../helpers/openapi-requests.js'

/** Requests per operation, valid and invalid. */
const RUNS = 500
/** Small enough that a generated body goes over it now and then (413). */
const BODY_LIMIT = 4096
const credentials = { basic: 'servant:server', bearer: 'secret-token' }
/** A fixed seed, so that every run sends the same requests; FC_SEED=<n> tries others. */
const SEED = Number(process.env.FC_SEED ?? 1797)

/**
 * Check 4b: requests generated from the document's own parameter and body schemas (fast-check),
 * valid and invalid, RUNS per operation, sent with inject: every answer is a documented status
 * whose headers and body match the document (the checker of 4a), never a 5xx but where the
 * document's only answer is one (GET /failing, by contract). Bearer tokens are on, so that both
 * schemes are exercised.
 */
t.test('generated requests: every answer is documented, and none is a 5xx', async (t) => {
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

  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const seen = new Set<number>()
      statuses.set(operation.operationId, seen)
      // An operation that never succeeds (GET /failing) answers its documented 5xx by contract.
      const fiveHundreds = !Object.keys(operation.responses).some((status) => status.startsWith('2'))
      await fc.assert(fc.asyncProperty(requestsOf(method, path), async (request) => {
        sent++
        const res = await inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.body === undefined ? {} : { payload: request.body }) })
        seen.add(res.statusCode)
        const mismatches = check(request.method, res.raw.req.url ?? request.url, res)
        if (mismatches === undefined || mismatches.length > 0 || (res.statusCode >= 500 && !fiveHundreds)) {
          throw new Error(`${request.method} ${request.url} → ${res.statusCode}: ${mismatches?.join('; ') ?? 'no operation'}\n${res.body.slice(0, 300)}`)
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
})
