import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { Test } from 'tap'
import { ApiError, createApiClient, decodeHeaders, unwrap, type ApiError as Failure } from '../../client/index.js'

// What the server asks of a client and what a proxy or a broken server may answer: Retry-After
// read, the retries it asks for (and those it must not get), headers that are not what the
// document says. Against servers of the test's own, which answer what each test scripts.

/** An answer a scripted server gives: its status and headers, and a JSON body; `drop`: the connection is closed with no answer. */
type Scripted = { status: number, headers?: Record<string, string>, body?: unknown } | 'drop'

/** A server that answers `script` in turn (its last answer for ever after), and the requests it got (method and path). */
async function scripted (t: Test, ...script: Scripted[]) {
  const requests: string[] = []
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    const next = script[Math.min(requests.length, script.length) - 1] as Scripted
    req.resume()
    if (next === 'drop') {
      req.socket.destroy()
      return
    }
    res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers }).end(JSON.stringify(next.body ?? { message: `${next.status}` }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

/** The ApiError a call rejects with. */
async function rejection (call: Promise<unknown>): Promise<Failure> {
  const error = await call.then(() => undefined, (err: unknown) => err)
  if (!(error instanceof ApiError)) throw new Error(`not an ApiError: ${String(error)}`)
  return error
}

const UNAVAILABLE = { status: 503, headers: { 'retry-after': '1' }, body: { statusCode: 503, error: 'Service Unavailable', message: 'retry later' } }
const HELLO = { status: 200, body: { msg: 'Hello, servant' } }
const ADA = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }

t.test('a 503 with Retry-After: 1 is an HttpError whose retryAfter is 1; no retry unless the client asks', async (t) => {
  const { url, requests } = await scripted(t, UNAVAILABLE, HELLO)
  const api = createApiClient({ baseUrl: url })
  const error = await rejection(unwrap(api.GET('/hello')))
  t.same([error.kind, error.kind === 'http' && error.status, error.kind === 'http' && error.retryAfter], ['http', 503, 1])
  t.same(requests, ['GET /hello'], 'sent once')
  const answer = await api.GET('/hello')
  t.equal(answer.response.status, 200, 'the next call is another call')
  t.same(decodeHeaders('GET /hello', (await createApiClient({ baseUrl: (await scripted(t, UNAVAILABLE)).url }).GET('/hello')).response), { status: 503, 'Retry-After': 1 }, 'decodeHeaders() reads it too')
})

t.test('with retry, the same call succeeds after at least the Retry-After, by the clock the client waits on', async (t) => {
  const { url, requests } = await scripted(t, UNAVAILABLE, HELLO)
  const api = createApiClient({ baseUrl: url, retry: true })
  const started = performance.now()
  t.same(await unwrap(api.GET('/hello')), { msg: 'Hello, servant' })
  const waited = performance.now() - started
  t.ok(waited >= 1000, `at least 1 s (${Math.round(waited)} ms)`)
  t.same(requests, ['GET /hello', 'GET /hello'], 'sent twice')
})

t.test('a POST is sent once, whatever the client retries, unless its call asks; PUT and DELETE are retried', async (t) => {
  const once = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '0' } }, { status: 201, headers: { location: '/users/3' }, body: ADA })
  const api = createApiClient({ baseUrl: once.url, retry: { delay: 1 } })
  const refused = await rejection(unwrap(api.POST('/users', { body: ADA })))
  t.same([refused.kind, refused.kind === 'http' && refused.retryAfter], ['http', 0])
  t.same(once.requests, ['POST /users'], 'a POST: sent once')
  const twice = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '0' } }, { status: 201, headers: { location: '/users/3' }, body: ADA })
  const created = await createApiClient({ baseUrl: twice.url }).POST('/users', { body: ADA, retry: { delay: 1 } })
  t.same([created.response.status, created.data], [201, ADA], 'retried when its call says so')
  t.same(twice.requests, ['POST /users', 'POST /users'])
  const market = await scripted(t, { status: 429, headers: { 'retry-after': '0' } }, { status: 200, body: { from: 'a', to: 'b', subject: 'c', body: 'd' } })
  t.equal((await unwrap(createApiClient({ baseUrl: market.url, retry: true }).marketing({ clientName: 'Alp', clientEmail: 'alp@foo.com', clientAge: 26, clientInterestedIn: [] }, { retry: { delay: 1 } }))).subject, 'c', 'a helper\'s POST, when asked')
  const writes = await scripted(t, { status: 429, headers: { 'retry-after': '0' } }, { status: 204 })
  const writer = createApiClient({ baseUrl: writes.url, retry: { delay: 1 } })
  t.equal((await writer.PUT('/users/{userid}', { params: { path: { userid: 1 } }, body: ADA })).response.status, 204)
  t.equal((await writer.DELETE('/users/{userid}', { params: { path: { userid: 1 } } })).response.status, 204)
  t.same(writes.requests, ['PUT /users/1', 'PUT /users/1', 'DELETE /users/1'], 'a PUT retried on 429; a DELETE too (answered at once here)')
  const never = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '0' } }, HELLO)
  t.equal((await createApiClient({ baseUrl: never.url, retry: true }).GET('/hello', { retry: false })).response.status, 503, 'a call\'s retry: false')
})

t.test('no answer (a dropped connection): retried with backoff when idempotent; the attempts bound it', async (t) => {
  const dropped = await scripted(t, 'drop', HELLO)
  t.same(await unwrap(createApiClient({ baseUrl: dropped.url, retry: { delay: 1 } }).GET('/hello')), { msg: 'Hello, servant' })
  t.same(dropped.requests, ['GET /hello', 'GET /hello'])
  const gone = await scripted(t, 'drop')
  const error = await rejection(createApiClient({ baseUrl: gone.url, retry: { attempts: 3, delay: 1 } }).GET('/hello'))
  t.equal(error.kind, 'network', 'the last failure')
  t.equal(gone.requests.length, 3, 'three attempts')
  const post = await scripted(t, 'drop', HELLO)
  t.equal((await rejection(createApiClient({ baseUrl: post.url, retry: true }).POST('/users', { body: ADA }))).kind, 'network')
  t.equal(post.requests.length, 1, 'a POST that may have arrived is not sent again')
  const busy = await scripted(t, { status: 503 })
  t.equal((await createApiClient({ baseUrl: busy.url, retry: { attempts: 2, delay: 1 } }).GET('/hello')).response.status, 503, 'the last answer, once the attempts are spent')
  t.equal(busy.requests.length, 2)
})

t.test('the helpers retry too: pages, users(), the stream\'s start', async (t) => {
  const page = { status: 206, headers: { 'accept-ranges': 'id', 'total-count': '1' }, body: [ADA] }
  const { url, requests } = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '0' } }, page)
  const api = createApiClient({ baseUrl: url, retry: { delay: 1 } })
  t.same((await api.page('GET /users')).items, [ADA])
  const users = await scripted(t, { status: 429, headers: { 'retry-after': '0' } }, { status: 200, headers: { 'user-count': '1' }, body: [ADA] })
  t.same(await unwrap(createApiClient({ baseUrl: users.url, retry: { delay: 1 } }).users()), [ADA])
  const stream = await scripted(t, { status: 503 }, { status: 200, body: ADA })
  const streamed = []
  for await (const user of createApiClient({ baseUrl: stream.url, retry: { delay: 1 } }).userStream(1)) streamed.push(user)
  t.same(streamed, [ADA])
  t.same([requests.length, users.requests.length, stream.requests.length], [2, 2, 2])
})

t.test('waits the call cannot afford: a Retry-After beyond maxDelay or past the timeout is not waited for; the signal stops a wait', async (t) => {
  const limited = await scripted(t, { status: 429, headers: { 'retry-after': '3600' } }, HELLO)
  const error = await rejection(unwrap(createApiClient({ baseUrl: limited.url, retry: true }).GET('/hello')))
  t.same([error.kind, error.kind === 'http' && error.retryAfter], ['http', 3600], 'an hour: the 429 at once, with its Retry-After')
  t.equal(limited.requests.length, 1)
  const slow = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '20' } }, HELLO)
  const late = await rejection(unwrap(createApiClient({ baseUrl: slow.url, retry: true, timeout: 10_000 }).GET('/hello')))
  t.same([late.kind, late.kind === 'http' && late.retryAfter], ['http', 20], 'a wait longer than the timeout left: the 503, not a timeout')
  t.equal(slow.requests.length, 1)
  const held = await scripted(t, { ...UNAVAILABLE, headers: { 'retry-after': '30' } }, HELLO)
  const controller = new AbortController()
  const api = createApiClient({
    baseUrl: held.url,
    retry: true,
    // The signal aborts once the 503 is in the client's hands: during the wait.
    fetch: async (request) => {
      const response = await fetch(request)
      setTimeout(() => controller.abort('enough'), 10)
      return response
    }
  })
  const aborted = await rejection(api.GET('/hello', { signal: controller.signal }))
  t.same([aborted.kind, aborted.kind === 'aborted' && aborted.cause], ['aborted', 'enough'], 'the signal ends the wait')
  t.equal(held.requests.length, 1)
  // Tries answered at once, without a network: only the waits take time, so no try is in flight as
  // the timeout ends, however busy the machine (a late wait still ends before the timeout's timer runs).
  let tries = 0
  const unavailable = async () => {
    tries++
    return Response.json(UNAVAILABLE.body, { status: 503 })
  }
  const timed = createApiClient({ baseUrl: 'http://service.invalid', retry: { attempts: 1000, delay: 5 }, fetch: unavailable })
  const last = await timed.GET('/hello', { timeout: 1000 })
  t.equal(last.response.status, 503, 'the timeout counts the waits: once the next would end past it, the last answer')
  t.ok(tries >= 2 && tries < 1000, `retried meanwhile (${tries} attempts)`)
})

t.test('headers that are not what the document says: an ApiError of kind decode naming the header', async (t) => {
  const { url } = await scripted(t, { status: 200, headers: { 'x-an-int': 'abc', 'x-a-bool': 'true' }, body: ADA }, { status: 200, headers: { 'x-a-bool': 'true' }, body: ADA })
  const api = createApiClient({ baseUrl: url })
  const lying = await api.GET('/albert')
  const error = await rejection((async () => decodeHeaders('GET /albert', lying.response))())
  t.same([error.kind, error.kind === 'decode' && error.header, error.operation, error.message], ['decode', 'X-An-Int', 'GET /albert', 'the answer could not be read: X-An-Int: "abc" is not an integer'], 'X-An-Int: abc')
  const missing = await rejection((async () => decodeHeaders('GET /albert', (await api.GET('/albert')).response))())
  t.same([missing.kind, missing.kind === 'decode' && missing.header], ['decode', 'X-An-Int'], 'X-An-Int missing, though required')
  const page = await scripted(t, { status: 206, headers: { 'total-count': '1' }, body: [ADA] })
  const unreadable = await rejection(createApiClient({ baseUrl: page.url }).page('GET /users'))
  t.same([unreadable.kind, unreadable.kind === 'decode' && unreadable.header], ['decode', 'Accept-Ranges'], 'a page without its required Accept-Ranges')
})
