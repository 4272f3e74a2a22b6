// One program, run by test/system/client-package.test.ts on Node 24 with the packed client, and by
// test/browser/client.js in Chromium from another origin: pages, decoded headers, an error of each
// kind, a cancelled stream. It checks what it sees and answers what passed and what failed.
import { ApiError, createApiClient, decodeHeaders, isApiError, unwrap } from 'servant-example-api-client'

/** Where the program calls: the service; a URL where no answer comes (nothing listens, or the browser refuses it: CORS); one that never answers. */
export interface ProgramUrls {
  service: string
  refusing: string
  silent: string
}

export interface ProgramReport {
  passed: string[]
  failed: string[]
}

/** The kind of ApiError a call rejects with, or what else happened. */
async function kindOf (call: Promise<unknown>): Promise<string> {
  try {
    await call
    return 'no error'
  } catch (err) {
    return err instanceof ApiError ? err.kind : `not an ApiError: ${String(err)}`
  }
}

export async function run ({ service, refusing, silent }: ProgramUrls): Promise<ProgramReport> {
  const report: ProgramReport = { passed: [], failed: [] }
  const check = (name: string, ok: boolean, seen?: unknown) => {
    if (ok) report.passed.push(name)
    else report.failed.push(`${name}: ${JSON.stringify(seen)}`)
  }
  const api = createApiClient({ baseUrl: service, credentials: { basic: { username: 'servant', password: 'server' } }, timeout: 10_000 })

  // Pages, every one, their headers decoded.
  let colors = 0
  let pages = 0
  let total = -1
  let last: unknown = null
  for await (const page of api.pages('GET /colors', { field: 'name', limit: 20 })) {
    colors += page.items.length
    pages++
    total = page.totalCount
    last = page.nextRange
  }
  check('every colour, page after page, to the last', colors === total && pages === Math.ceil(total / 20) && last === undefined, { colors, pages, total })
  const users = await api.page('GET /users/list-all', { field: 'id', limit: 1 })
  check('a page of users: Content-Range and Next-Range decoded', users.items.length === 1 && users.contentRange?.first === 1 &&
    users.nextRange?.value === 1 && users.nextRange.offset === 1 && users.totalCount >= 2, users.nextRange)

  // Headers, to their types.
  const albert = decodeHeaders('GET /albert', (await api.GET('/albert')).response)
  check('X-An-Int a number, X-A-Bool a boolean', albert.status === 200 && albert['X-An-Int'] === 1797 && albert['X-A-Bool'], albert)
  const created = await api.POST('/users', { body: { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
  if (created.error !== undefined) throw new Error(`POST /users: ${JSON.stringify(created.error)}`)
  const { Location } = decodeHeaders('POST /users', created.response)
  const ada = await unwrap(api.GET('/users/{userid}', { params: { path: { userid: Location.id } } }))
  check('Location: the new id', ada.name === 'Ada Lovelace', Location)
  await unwrap(api.DELETE('/users/{userid}', { params: { path: { userid: Location.id } } }))

  // An error of each kind.
  try {
    await unwrap(api.GET('/users/{userid}', { params: { path: { userid: Location.id } } }))
    check('http: 404', false)
  } catch (err) {
    check('http: 404, its body typed', isApiError(err, 'GET /users/{userid}') && err.status === 404 && err.body.message.startsWith('No user'), err)
  }
  check('network: no answer', await kindOf(createApiClient({ baseUrl: refusing }).GET('/hello')) === 'network')
  check('timeout: the call\'s own', await kindOf(createApiClient({ baseUrl: silent }).GET('/hello', { timeout: 200 })) === 'timeout')
  const controller = new AbortController()
  const pending = kindOf(createApiClient({ baseUrl: silent }).GET('/hello', { signal: controller.signal }))
  controller.abort()
  check('aborted: by the signal', await pending === 'aborted')
  check('decode: JSON by default, and GET /docs is text', await kindOf(api.GET('/docs')) === 'decode')

  // A stream cancelled by its signal: it stops there.
  const stop = new AbortController()
  let streamed = 0
  const stream = await kindOf((async () => {
    for await (const user of api.userStream(10_000_000, { signal: stop.signal })) {
      if (typeof user.name === 'string' && ++streamed === 100) stop.abort()
    }
  })())
  check('a stream cancelled after 100 users', stream === 'aborted' && streamed === 100, { stream, streamed })
  return report
}
