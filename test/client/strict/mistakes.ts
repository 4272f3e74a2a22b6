// Compiled by test/system/client-package.test.ts: the mistakes a caller makes, each one a type error
// (TypeScript reports a @ts-expect-error with nothing to expect as an error of its own).
import { createApiClient, decodeHeaders, isApiError, unwrap, type ApiClient, type OperationError, type RangeOf } from 'servant-example-api-client'

const anonymous = createApiClient({ baseUrl: 'http://localhost:3000' })
const reader = createApiClient({ baseUrl: 'http://localhost:3000', credentials: { basic: { username: 'servant', password: 'server' } } })
const writer = createApiClient({ baseUrl: 'http://localhost:3000', credentials: { bearer: 'token' } })

/** Credentials: an operation that needs some the client was not given is not there. */
export async function credentials (): Promise<unknown[]> {
  // @ts-expect-error: GET /users/list-all needs Basic credentials
  await anonymous.GET('/users/list-all')
  // @ts-expect-error: a bearer token is not Basic credentials
  await writer.GET('/list-all/users')
  // @ts-expect-error: POST /products needs the bearer token
  await reader.POST('/products', { body: { productId: 1, name: 'Pie' } })
  // @ts-expect-error: nor does the pager page a route it cannot call
  await anonymous.page('GET /users/list-all/now')
  return [await writer.POST('/products', { body: { productId: 1, name: 'Pie' } }), await reader.page('GET /list-all/users'), await anonymous.GET('/products')]
}

/** Ranges: a field of the route, a value of the field's type; not a free string. */
export async function ranges (api: ApiClient): Promise<unknown[]> {
  // @ts-expect-error: a Range is not a free string
  await api.page('GET /colors', 'name; limit 10')
  // @ts-expect-error: GET /users pages by id, not by name
  await api.page('GET /users', { field: 'name' })
  // @ts-expect-error: rgb's values are integers
  await api.page('GET /colors', { field: 'rgb', value: '255' })
  // @ts-expect-error: an order is asc or desc
  await api.page('GET /colors', { field: 'name', order: 'up' })
  // @ts-expect-error: GET /persons does not page
  await api.page('GET /persons')
  const range: RangeOf<'GET /products'> = { field: 'id', value: 3, limit: 10 }
  const page = await api.page('GET /products', range)
  // @ts-expect-error: a product has no `email`
  console.log(page.items[0]?.email)
  // @ts-expect-error: Content-Range's values of an id range are numbers
  const first: string | undefined = page.contentRange?.first
  return [page.totalCount + (page.nextRange?.value ?? 0), first]
}

/** Headers: decoded to their types, by operation and status; the response of a call is of its operation. */
export async function headers (api: ApiClient): Promise<unknown[]> {
  const answer = await api.GET('/albert')
  if (answer.error !== undefined) return []
  const albert = decodeHeaders('GET /albert', answer.response)
  // @ts-expect-error: X-An-Int is a number
  const text: string = albert['X-An-Int']
  // @ts-expect-error: X-A-Bool is a boolean
  const count: number = albert['X-A-Bool']
  // @ts-expect-error: the response of GET /albert is not one of GET /isaac, whose headers are optional
  console.log(decodeHeaders('GET /isaac', answer.response))
  const users = decodeHeaders('GET /users', (await api.GET('/users')).response)
  // @ts-expect-error: User-Count comes with a 200 only: narrow by status first
  console.log(users['User-Count'])
  // @ts-expect-error: a 503 has Retry-After, not Total-Count
  if (users.status === 503) console.log(users['Total-Count'])
  const added = await api.POST('/users', { body: { name: 'Ada', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
  // @ts-expect-error: an error's answer has no Location: narrow the answer to a success first
  console.log(decodeHeaders('POST /users', added.response).Location)
  if (added.error !== undefined) return []
  const created = decodeHeaders('POST /users', added.response)
  // @ts-expect-error: the new id is a number
  const id: string = created.Location.id
  return [text, count, users.status === 200 ? users['User-Count'] : users.status === 206 ? users['Total-Count'] : users.status, id]
}

/** Errors, statuses and bodies. */
export async function errors (api: ApiClient): Promise<string> {
  try {
    return (await unwrap(api.GET('/users/{userid}', { params: { path: { userid: 1 } } }))).name
  } catch (err) {
    // @ts-expect-error: GET /users/{userid} documents no 401
    if (isApiError(err, 'GET /users/{userid}') && err.status === 401) return 'never'
    // @ts-expect-error: a typo in a field of the error body
    if (isApiError(err, 'GET /users/{userid}') && err.status === 404) return err.body.mesage
    if (isApiError(err, 'GET /users/{userid}')) {
      // @ts-expect-error: an error of GET /users/{userid} is not one of GET /user/{userid}, another path to the same users
      if (isApiError(err, 'GET /user/{userid}')) return 'never'
      return explain(err)
    }
    throw err
  }
}

/** What a 404 of GET /users/{userid} says. */
function explain (err: OperationError<'GET /users/{userid}'>): string {
  // @ts-expect-error: the error of GET /users/{userid} is not one of GET /products/{productid}
  const product: boolean = isApiError(err, 'GET /products/{productid}')
  return product || err.status !== 404 ? err.message : err.body.message
}

/** Calls: fields, parameters, JSON by default, signals and timeouts. */
export async function calls (api: ApiClient): Promise<unknown[]> {
  // @ts-expect-error: a user has no `nmae`
  await api.POST('/users', { body: { nmae: 'Ada', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
  // @ts-expect-error: a userid is a number
  await api.GET('/users/{userid}', { params: { path: { userid: '1' } } })
  const users = await unwrap(api.GET('/users'))
  // @ts-expect-error: JSON by default: a list of users, not a string
  users.split('\n')
  // @ts-expect-error: count is a number
  api.userStream('10')
  // @ts-expect-error: a signal is an AbortSignal
  api.userStream(10, { signal: 'stop' })
  // @ts-expect-error: a timeout is milliseconds
  await api.page('GET /colors', undefined, { timeout: '5s' })
  // @ts-expect-error: a raw call's timeout is milliseconds too
  await api.GET('/colors', { timeout: '5s' })
  // @ts-expect-error: retry is true, false or options, not a count
  await api.GET('/users', { retry: 3 })
  // @ts-expect-error: attempts is a count
  await api.POST('/users', { body: { name: 'Ada', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }, retry: { attempts: 'twice' } })
  // @ts-expect-error: Prefer is return=representation or return=minimal
  await api.PUT('/users/{userid}', { params: { path: { userid: 1 }, header: { Prefer: 'return=everything' } }, body: { name: 'Ada', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' } })
  return [users.map((user) => user.name), api.userStream(10, { signal: AbortSignal.timeout(1000), timeout: 500 })]
}
