// Run by test/system/client-package.test.ts on Node 24 with the packed client, against a server of
// the test's own that answers what the service's own would not on its own: 503 with
// `Retry-After: 1` (GET /hello twice, then a success; POST /users always) and `X-An-Int: abc`
// (GET /albert). It checks what it sees and answers what passed and what failed.
import { ApiError, createApiClient, decodeHeaders, unwrap } from 'servant-example-api-client'
import type { ProgramReport } from './program.js'

export async function answers (url: string): Promise<ProgramReport> {
  const report: ProgramReport = { passed: [], failed: [] }
  const check = (name: string, ok: boolean, seen?: unknown) => {
    if (ok) report.passed.push(name)
    else report.failed.push(`${name}: ${JSON.stringify(seen)}`)
  }
  const plain = createApiClient({ baseUrl: url, timeout: 10_000 })
  const retrying = createApiClient({ baseUrl: url, timeout: 10_000, retry: true })

  const refused = await unwrap(plain.GET('/hello')).then(() => 'no error', (err: unknown) => err)
  check('a 503 with Retry-After: 1 is an HttpError whose retryAfter is 1', refused instanceof ApiError && refused.kind === 'http' &&
    refused.status === 503 && refused.retryAfter === 1, refused)

  // The wait measured by the clock the client waits on.
  const started = performance.now()
  const hello = await unwrap(retrying.GET('/hello'))
  const waited = performance.now() - started
  check('with retry, the same call succeeds after at least 1 s', hello.msg === 'Hello, servant' && waited >= 1000, { hello, waited })

  const posted = await retrying.POST('/users', { body: { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
  check('a POST answered 503 comes back as it is (sent once: the server counts)', posted.response.status === 503, posted.response.status)

  const albert = await plain.GET('/albert')
  const decoded = await (async () => decodeHeaders('GET /albert', albert.response))().then(() => 'no error', (err: unknown) => err)
  check('X-An-Int: abc on GET /albert is an ApiError of kind decode naming the header', decoded instanceof ApiError && decoded.kind === 'decode' &&
    decoded.header === 'X-An-Int' && decoded.message.includes('X-An-Int'), decoded instanceof Error ? decoded.message : decoded)
  return report
}
