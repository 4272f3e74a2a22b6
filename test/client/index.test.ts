import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import http from 'node:http'
import net from 'node:net'
import {
  ApiError, basicAuthorization, createApiClient, decodeHeaders, formFields, isApiError, marketingForm, ndjsonItems, rangeHeader, unwrap,
  type Color, type ErrorBody, type HttpError, type User
} from '../../client/index.js'
import COLORS from '../../routes/colors/colors.json' with { type: 'json' }
import { baseUrl, build, documentConformance } from '../helpers/index.js'
import { conformanceCounts } from '../helpers/openapi-conformance.js'

const TOKEN = 'secret-token'
const credentials = { basic: { username: 'servant', password: 'server' }, bearer: TOKEN }
const ALP = { clientName: 'Alp', clientEmail: 'alp@foo.com', clientAge: 26, clientInterestedIn: ['haskell', 'mathematics'] }
const ADA = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }

/**
 * The service listening on a free port, with API tokens and a myfile.txt; clients whose every
 * response is also checked against the OpenAPI document (check 4a, over HTTP).
 */
async function serve (t: Test, env: Record<string, string> = {}) {
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'client-'))
  fs.writeFileSync(path.join(files, 'myfile.txt'), 'Hello, client\n')
  t.teardown(() => fs.rmSync(files, { recursive: true, force: true }))
  // No drain at the close: fetch keeps its connections open, and the drain (SHUTDOWN_DRAIN, 1 s)
  // would wait for them at the end of every test; the close is not what these tests are about.
  const server = await build(t, { API_TOKENS: TOKEN, FILES_DIR: files, SHUTDOWN_DRAIN: '0', ...env })
  const { check } = await documentConformance(server)
  await server.listen({ host: '127.0.0.1', port: 0 })
  // fetch may open a connection it then sends nothing on, even as the test ends, for which the
  // close would wait until HEADERS_TIMEOUT (15 s): such ones are closed first (teardowns run last first).
  const connections: net.Socket[] = []
  let ended = false
  server.server.on('connection', (socket: net.Socket) => { if (ended) socket.destroy(); else connections.push(socket) })
  t.teardown(() => { ended = true; for (const socket of connections) if (socket.bytesRead === 0) socket.destroy() })
  const sent: Request[] = []
  const conformingFetch = async (request: Request) => {
    sent.push(request.clone())
    const response = await fetch(request)
    const body = request.method === 'HEAD' ? '' : await response.clone().text()
    const mismatches = check(request.method, new URL(request.url).pathname + new URL(request.url).search, {
      statusCode: response.status,
      headers: Object.fromEntries(response.headers),
      body
    })
    if (mismatches === undefined || mismatches.length > 0) t.fail(`${request.method} ${request.url} → ${response.status}`, { mismatches })
    else conformanceCounts.validated++
    return response
  }
  const url = baseUrl(server)
  return {
    server,
    url,
    sent,
    api: createApiClient({ baseUrl: url, credentials, fetch: conformingFetch }),
    anonymous: createApiClient({ baseUrl: url, fetch: conformingFetch }),
    conformingFetch
  }
}

/** The answer of a raw call, which must be a success: its response's type then knows it (decodeHeaders() types its headers by its success statuses). */
function succeeded<A extends { error?: unknown }> (answer: A): A & { error?: never } {
  if (answer.error !== undefined) throw new Error(`not a success: ${JSON.stringify(answer.error)}`)
  return answer as A & { error?: never }
}

/** Every item of an async iterable. */
async function collect<T> (items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

/** The ApiError a call rejects with. */
async function rejection (call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(() => undefined, (err: unknown) => err)
  if (!(error instanceof ApiError)) throw new Error(`not an ApiError: ${String(error)}`)
  return error
}

/** The HttpError a call rejects with. */
async function failure (t: Test, call: Promise<unknown>, status: number): Promise<HttpError> {
  const error = await rejection(call)
  t.equal(error.kind, 'http', 'an HTTP error')
  t.equal(error.kind === 'http' ? error.status : undefined, status, `status ${status}`)
  return error as HttpError
}

t.test('the servant tutorial\'s client examples: position 10 10, hello (Just "servant"), marketing for Alp', async (t) => {
  const { api } = await serve(t)
  t.same(await unwrap(api.GET('/position/{x}/{y}', { params: { path: { x: 10, y: 10 } } })), { xCoord: 10, yCoord: 10 })
  t.same(await unwrap(api.GET('/hello', { params: { query: { name: 'servant' } } })), { msg: 'Hello, servant' })
  t.same(await unwrap(api.GET('/hello')), { msg: 'Hello, anonymous coward' })
  t.same(await unwrap(api.POST('/marketing', { body: ALP })), {
    from: 'great@company.com',
    to: 'alp@foo.com',
    subject: 'Hey Alp, we miss you!',
    body: 'Hi Alp,\n\nSince you\'ve recently turned 26, have you checked out our latest haskell, mathematics products? Give us a visit!'
  })
})

t.test('the simple endpoints: /a, /b, /health, /isaac, /albert, /persons, /myfile.txt, /docs, /openapi.json', async (t) => {
  const { api } = await serve(t)
  t.equal(await unwrap(api.GET('/a')), 1797)
  t.equal(await unwrap(api.GET('/b')), 'hi', 'GET /b without a body (fetch sends no body with GET)')
  t.same(await unwrap(api.GET('/health')), { status: 'ok' })
  t.same(await unwrap(api.GET('/isaac')), { name: 'Isaac Newton', age: 372, email: 'isaac@newton.co.uk', registration_date: '1683-03-01' })
  const albert = await api.GET('/albert')
  t.equal(albert.data?.name, 'Albert Einstein')
  t.equal(albert.response.headers.get('x-an-int'), '1797', 'the response headers are there')
  t.same(await unwrap(api.GET('/persons')), [{ firstName: 'Isaac', lastName: 'Newton' }, { firstName: 'Albert', lastName: 'Einstein' }])
  const table = await api.GET('/persons', { headers: { accept: 'text/html' }, parseAs: 'text' })
  t.match(table.data, /^<table><tr><th>first name<\/th>/, 'HTML when asked for')
  t.same(await unwrap(api.GET('/myfile.txt')), { content: 'Hello, client\n' })
  t.match(await unwrap(api.GET('/docs', { parseAs: 'text' })), /^# servant-example-api\n/)
  t.match(await unwrap(api.GET('/openapi.json')), { openapi: '3.1.0' })
})

t.test('/users: list, sorted and as text; add, view, replace and delete; /user', async (t) => {
  const { api } = await serve(t)
  const sorted: User[] = await unwrap(api.users({ sortby: 'age' }))
  t.same(sorted.map((user) => user.name), ['Albert Einstein', 'Isaac Newton'])
  t.match(await unwrap(api.GET('/users', { headers: { accept: 'text/plain' }, parseAs: 'text' })), /^Isaac Newton, 372, /)
  const added = succeeded(await api.POST('/users', { body: ADA }))
  t.equal(added.response.status, 204)
  const headers = decodeHeaders('POST /users', added.response)
  t.same(headers, { status: 204, Location: { url: '/users/3', id: 3 } }, 'Location of the new user, and its id')
  const { id } = headers.Location
  t.same(await unwrap(api.GET('/users/{userid}', { params: { path: { userid: id } } })), ADA)
  const replaced = await unwrap(api.PUT('/users/{userid}', { params: { path: { userid: id }, header: { Prefer: 'return=representation' } }, body: { ...ADA, age: 37 } }))
  t.same(replaced, { ...ADA, age: 37 }, 'Prefer: return=representation')
  t.same(await unwrap(api.GET('/user/{userid}', { params: { path: { userid: id } } })), { ...ADA, age: 37 }, '/user is the same store')
  t.equal((await api.DELETE('/user/{userid}', { params: { path: { userid: id } } })).response.status, 204)
  const gone = await failure(t, unwrap(api.GET('/users/{userid}', { params: { path: { userid: id } } })), 404)
  t.equal(isApiError(gone, 'GET /users/{userid}') && gone.status === 404 ? gone.body.message : undefined, `No user with userid ${id}`, 'a typed error body')
  const created = await api.POST('/users', { body: ADA, params: { header: { Prefer: 'return=representation' } } })
  t.equal(created.response.status, 201)
  t.same(created.data, ADA)
  t.equal((await api.DELETE('/users/{userid}', { params: { path: { userid: id + 1 } } })).response.status, 204)
})

t.test('Basic credentials for /users/list-all, /users/list-all/now and /list-all/users; typed 401 without them', async (t) => {
  const { api, anonymous } = await serve(t)
  const listings = [await unwrap(api.GET('/users/list-all')), await unwrap(api.GET('/users/list-all/now')), await unwrap(api.GET('/list-all/users'))]
  t.same(listings.map((users) => users.length), [2, 2, 2])
  // What the types forbid (a client without Basic credentials has no GET /users/list-all): the service refuses it.
  const refused = await failure(t, unwrap((anonymous as unknown as typeof api).GET('/users/list-all')), 401)
  t.equal(refused.response.headers.get('www-authenticate'), 'Basic realm="my-realm"')
  t.equal((refused.body as ErrorBody).statusCode, 401)
})

t.test('Bearer credentials for writes on /products; reads are public', async (t) => {
  const { api, anonymous } = await serve(t)
  t.same(await unwrap(anonymous.GET('/products')), [])
  const writer = anonymous as unknown as typeof api
  await failure(t, unwrap(writer.POST('/products', { body: { productId: 1, name: 'Apple pie' } })), 401)
  const created = await api.POST('/products', { body: { productId: 1797, name: 'Apple pie' }, params: { header: { Prefer: 'return=representation' } } })
  t.same(created.data, { productId: 1797, name: 'Apple pie' })
  const productid = decodeHeaders('POST /products', succeeded(created).response).Location.id
  t.same(await unwrap(anonymous.GET('/products/{productid}', { params: { path: { productid } } })), { productId: 1797, name: 'Apple pie' })
  t.equal((await api.PUT('/products/{productid}', { params: { path: { productid } }, body: { productId: 1798 } })).response.status, 204)
  await failure(t, unwrap(writer.DELETE('/products/{productid}', { params: { path: { productid } } })), 401)
  t.equal((await api.DELETE('/products/{productid}', { params: { path: { productid } } })).response.status, 204)
})

t.test('items() and pages(): every page of GET /colors, following Next-Range, the headers decoded', async (t) => {
  const { api } = await serve(t)
  const names: string[] = []
  for await (const color of api.items('GET /colors', { field: 'name', limit: 10 })) names.push(color.name)
  t.equal(names.length, COLORS.length, 'every colour once, over 6 pages')
  t.same(names, COLORS.map((color) => color.name).sort((a, b) => a < b ? 1 : a > b ? -1 : 0), 'in the default order, desc')
  const bright: Color[] = []
  for await (const color of api.items('GET /colors', { field: 'rgb', value: 700, order: 'asc' })) bright.push(color)
  t.ok(bright.length > 0 && bright.every((color) => color.rgb.reduce((a, b) => a + b) >= 700), 'from a value on')
  const grey = await api.page('GET /colors', { field: 'hex', value: '#808080', limit: 1 })
  t.equal(grey.items[0]?.hex, '#808080', 'a value with # is percent-encoded')
  t.same(grey.contentRange, { field: 'hex', first: '#808080', last: '#808080' }, 'Content-Range decoded')
  t.same(grey.nextRange, { field: 'hex', value: '#808080', limit: 1, offset: 1, order: 'desc' }, 'Next-Range decoded')
  t.equal(grey.totalCount, COLORS.length, 'Total-Count')
  const all = []
  for await (const page of api.pages('GET /colors', { field: 'rgb', limit: 25 })) all.push(page)
  t.same(all.map((page) => page.items.length), [25, 25, COLORS.length - 50], 'pages of the limit, then the rest')
  t.same(all.map((page) => page.nextRange === undefined), [false, false, true], 'no Next-Range on the last page')
  t.match(all[1]?.nextRange, { field: 'rgb', value: all[1]?.contentRange?.last, limit: 25, order: 'desc' }, 'an integer field\'s value is a number')
  t.type(all[1]?.nextRange?.value, 'number')
  t.equal(rangeHeader({ field: 'name', value: 'Light Blue', limit: 2, offset: 1, order: 'asc' }), 'name Light%20Blue; limit 2; offset 1; order asc')
  t.throws(() => api.page('GET /colors', { field: 'name', value: '\uD800' }), URIError, 'a value UTF-8 cannot carry is the caller\'s error, before any call')
  const error = await failure(t, api.page('GET /colors', { field: 'name', limit: -1 }), 400)
  t.match((error.body as ErrorBody).message, /^Limit must be non-negative/, 'a malformed range is a typed error')
})

t.test('pages of every operation that pages by Range: users, products, the list-all routes', async (t) => {
  const { api } = await serve(t)
  for (let productId = 1; productId <= 5; productId++) await unwrap(api.POST('/products', { body: { productId, name: `Pie ${productId}` } }))
  for (const operation of ['GET /users', 'GET /users/list-all', 'GET /users/list-all/now', 'GET /list-all/users'] as const) {
    const first = await api.page(operation, { field: 'id', limit: 1 })
    t.same([first.items.map((user) => user.name), first.totalCount, first.contentRange], [['Isaac Newton'], 2, { field: 'id', first: 1, last: 1 }], operation)
    t.same(first.nextRange, { field: 'id', value: 1, limit: 1, offset: 1, order: 'asc' }, `${operation}: the next page`)
    const names = []
    for await (const user of api.items(operation, { field: 'id', limit: 1 })) names.push(user.name)
    t.same(names, ['Isaac Newton', 'Albert Einstein'], `${operation}: every page`)
  }
  const products = []
  for await (const page of api.pages('GET /products', { field: 'id', limit: 2, order: 'desc' })) products.push(page.items.map((product) => product.productId))
  t.same(products, [[5, 4], [3, 2], [1]], 'GET /products, backwards')
  const page = await api.page('GET /products')
  t.same([page.items.length, page.totalCount, page.nextRange], [5, 5, undefined], 'the default range: the field alone')
})

t.test('decodeHeaders(): the headers an operation declares, to their types', async (t) => {
  const { api, url } = await serve(t)
  const users = await api.GET('/users')
  t.same(decodeHeaders('GET /users', users.response), { status: 200, 'User-Count': 2 })
  const albert = await api.GET('/albert')
  const headers = decodeHeaders('GET /albert', albert.response)
  t.same(headers, { status: 200, 'X-An-Int': 1797, 'X-A-Bool': true }, 'an integer and a boolean')
  t.same(decodeHeaders('GET /isaac', (await api.GET('/isaac')).response), { status: 200 }, 'optional headers absent: absent')
  t.same(decodeHeaders('GET /hello', (await api.GET('/hello')).response), { status: 200 }, 'no headers declared')
  const page = await api.GET('/users', { params: { header: { Range: 'id; limit 1' } } })
  t.same(decodeHeaders('GET /users', page.response), {
    status: 206,
    'Accept-Ranges': 'id',
    'Content-Range': { field: 'id', first: 1, last: 1 },
    'Next-Range': { field: 'id', value: 1, limit: 1, offset: 1, order: 'asc' },
    'Total-Count': 2
  })
  // What a proxy or a broken server may answer: headers out of their type are a decode error of the page.
  const lying = (headers: Record<string, string>) => createApiClient({
    baseUrl: url,
    fetch: async () => Response.json([], { status: 206, headers: { 'accept-ranges': 'id', 'total-count': '2', ...headers } })
  })
  for (const headers of <Array<Record<string, string>>>[{ 'total-count': 'two' }, { 'next-range': 'name x' }, { 'next-range': 'id 1; limit -1' }, { 'content-range': 'id 1..x' }, { 'content-range': 'id 1' }]) {
    const error = await rejection(lying(headers).page('GET /users'))
    t.equal(error.kind, 'decode', JSON.stringify(headers))
  }
})

t.test('one error type: http, network, aborted, timeout and decode, each with what it knows', async (t) => {
  const { api, url } = await serve(t)
  const http = await rejection(unwrap(api.GET('/users/{userid}', { params: { path: { userid: 99 } } })))
  t.same([http.kind, http.name, http instanceof Error], ['http', 'ApiError', true])
  // Nothing listens on a port just closed.
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as net.AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  const network = await rejection(createApiClient({ baseUrl: `http://127.0.0.1:${port}` }).GET('/hello'))
  t.same([network.kind, network.operation], ['network', 'GET /hello'], 'connection refused')
  t.ok(network.kind === 'network' && network.cause instanceof TypeError, 'fetch\'s error as the cause')
  // A server that accepts and never answers: only the timeout ends the call.
  const silent = net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => silent.close())
  const sockets = new Set<net.Socket>()
  silent.on('connection', (socket) => sockets.add(socket))
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`
  const timedOut = await rejection(createApiClient({ baseUrl: silentUrl, timeout: 50 }).GET('/hello'))
  t.same([timedOut.kind, timedOut.kind === 'timeout' ? timedOut.timeout : 0], ['timeout', 50], 'the client\'s timeout')
  const callTimeout = await rejection(createApiClient({ baseUrl: silentUrl, timeout: 60_000 }).page('GET /colors', undefined, { timeout: 20 }))
  t.same([callTimeout.kind, callTimeout.kind === 'timeout' ? callTimeout.timeout : 0], ['timeout', 20], 'the call\'s own timeout first')
  const signalTimeout = await rejection(createApiClient({ baseUrl: silentUrl }).GET('/hello', { signal: AbortSignal.timeout(20) }))
  t.equal(signalTimeout.kind, 'timeout', 'AbortSignal.timeout() is a timeout too')
  const controller = new AbortController()
  const pending = rejection(createApiClient({ baseUrl: silentUrl, timeout: 60_000 }).users({ signal: controller.signal }))
  controller.abort('enough')
  const aborted = await pending
  t.same([aborted.kind, aborted.kind === 'aborted' ? aborted.cause : undefined], ['aborted', 'enough'], 'the signal\'s reason as the cause')
  const early = await rejection(api.GET('/hello', { signal: AbortSignal.abort() }))
  t.equal(early.kind, 'aborted', 'a signal aborted before the call')
  const markdown = await rejection(api.GET('/docs'))
  t.same([markdown.kind, markdown.kind === 'decode' ? markdown.response?.status : 0], ['decode', 200], 'JSON by default: a Markdown answer does not decode')
  const broken = await rejection(createApiClient({ baseUrl: url, fetch: async () => new Response('{"na', { headers: { 'content-type': 'application/json' } }) }).GET('/hello'))
  t.equal(broken.kind, 'decode', 'JSON that does not parse')
  let kinds = ''
  for (const err of [http, network, timedOut, aborted, markdown]) {
    switch (err.kind) {
      case 'http': kinds += err.status; break
      case 'network': kinds += ' network'; break
      case 'timeout': kinds += ` timeout ${err.timeout ?? ''}`; break
      case 'aborted': kinds += ` aborted ${String(err.cause)}`; break
      case 'decode': kinds += ` decode ${err.response?.headers.get('content-type') ?? ''}`; break
    }
  }
  t.equal(kinds, '404 network timeout 50 aborted enough decode text/plain; charset=utf-8')
})

t.test('userStream(): the NDJSON stream as an AsyncIterable<User>; breaking out ends it', async (t) => {
  const { api, url } = await serve(t)
  const names: string[] = []
  for await (const user of api.userStream(5)) names.push(user.name)
  t.same(names, ['Isaac Newton', 'Albert Einstein', 'Albert Einstein', 'Isaac Newton', 'Albert Einstein'])
  t.equal((await collect(api.userStream())).length, 3, 'three by default')
  t.same(await collect(api.userStream(0)), [], 'none')
  await failure(t, api.userStream(-1).next(), 400)
  // Unchecked: the checker would read the whole stream of a million users.
  const raw = createApiClient({ baseUrl: url })
  let read = 0
  for await (const user of raw.userStream(1_000_000)) {
    t.equal(typeof user.name, 'string')
    if (++read === 3) break
  }
  t.equal(read, 3, 'the loop stopped early, and so did the stream')
  await failure(t, api.userStream(-1, { signal: new AbortController().signal }).next(), 400)
  const split = new ReadableStream<Uint8Array>({
    start (controller) {
      for (const chunk of ['{"a":', '1}\n{"a"', ':2}']) controller.enqueue(new TextEncoder().encode(chunk))
      controller.close()
    }
  })
  t.same(await collect(ndjsonItems(split)), [{ a: 1 }, { a: 2 }], 'lines split across chunks, the last without a newline')
})

t.test('userStream() aborted by its signal or its timeout: the call rejects, and the server stops streaming', async (t) => {
  const { server, url } = await serve(t)
  const responses: http.ServerResponse[] = []
  server.server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => responses.push(response))
  /** Resolves with whether the server wrote the whole response, once it is closed. */
  const finished = (response: http.ServerResponse | undefined) => new Promise<boolean | undefined>((resolve) => {
    if (response === undefined || response.closed) resolve(response?.writableFinished)
    else response.on('close', () => resolve(response.writableFinished))
  })
  const api = createApiClient({ baseUrl: url })
  const controller = new AbortController()
  let read = 0
  const stopped = await rejection((async () => {
    for await (const user of api.userStream(10_000_000, { signal: controller.signal })) {
      t.equal(typeof user.name, 'string')
      if (++read === 1000) controller.abort()
    }
  })())
  t.same([stopped.kind, read], ['aborted', 1000], 'aborted after the 1,000th user, no user after')
  t.equal(await finished(responses[0]), false, 'the server closed the stream before its end')
  // How many users arrive within the 100 ms depends on the machine: one assertion over them all.
  const names: unknown[] = []
  const timedOut = await rejection((async () => { for await (const user of api.userStream(10_000_000, { timeout: 100 })) names.push(user.name) })())
  t.equal(timedOut.kind, 'timeout', 'a timeout ends the stream too')
  t.ok(names.every((name) => typeof name === 'string'), `the users read before it are whole (${names.length})`)
  t.equal(await finished(responses[1]), false, 'and the server\'s')
  t.equal(responses.length, 2)
})

t.test('/static/{path}, /failing, and typed errors of every kind', async (t) => {
  const { api } = await serve(t)
  t.equal(await unwrap(api.GET('/static/{path}', { params: { path: { path: 'hello.txt' } }, parseAs: 'text' })), 'Hello from the static area.\n')
  const part = await api.GET('/static/{path}', { params: { path: { path: 'hello.txt' }, header: { Range: 'bytes=0-4' } }, parseAs: 'text' })
  t.equal(part.response.status, 206)
  t.equal(part.data, 'Hello')
  await failure(t, unwrap(api.GET('/static/{path}', { params: { path: { path: 'missing.txt' } } })), 404)
  const failing = await failure(t, unwrap(api.GET('/failing', { parseAs: 'text' })), 503)
  t.equal(failing.body, 'Sorry dear user.', 'a text error body')
  const refused = await failure(t, unwrap(api.GET('/health', { headers: { accept: 'text/html' } })), 406)
  t.match((refused.body as ErrorBody).message, /Accept: text\/html/)
  t.match(failing.message, /^503 Service Unavailable: Sorry dear user\.$/)
})

t.test('isApiError(): an ApiError of that operation and of one of its documented statuses; the body as its media type says', async (t) => {
  const { api, url } = await serve(t)
  const missing = await failure(t, unwrap(api.GET('/users/{userid}', { params: { path: { userid: 99 } } })), 404)
  t.equal(missing.operation, 'GET /users/{userid}', 'the operation that answered')
  t.ok(isApiError(missing, 'GET /users/{userid}'), 'of GET /users/{userid}')
  t.notOk(isApiError(missing, 'GET /products/{productid}'), 'not of another operation, whose 404 it documents too')
  t.notOk(isApiError(new Error('404'), 'GET /users/{userid}'), 'not another error')
  const failing = await failure(t, unwrap(api.GET('/failing')), 503)
  t.equal(isApiError(failing, 'GET /failing') && failing.status === 503 ? failing.body : undefined, 'Sorry dear user.', 'a text body')

  // What a proxy in front of the service may answer: statuses and bodies no operation documents.
  const proxied = (response: Response) => createApiClient({ baseUrl: url, fetch: async () => response.clone() })
  const gateway = await failure(t, unwrap(proxied(new Response('404', { status: 502, headers: { 'content-type': 'text/plain' } })).GET('/health')), 502)
  t.equal(gateway.operation, 'GET /health')
  t.notOk(isApiError(gateway, 'GET /health'), 'a status the operation does not document')
  t.equal(gateway.body, '404', 'a text that looks like JSON stays a text (openapi-fetch parses it)')
  const json = await failure(t, unwrap(proxied(Response.json({ message: 'down' }, { status: 502 })).GET('/health')), 502)
  t.same(json.body, { message: 'down' }, 'a JSON body parsed')
  t.match(json.message, /^502 .*: down$/)
  const broken = await failure(t, unwrap(proxied(new Response('{"mess', { status: 502, headers: { 'content-type': 'application/json' } })).GET('/health')), 502)
  t.equal(broken.body, '{"mess', 'a JSON body that does not parse: its text')
  const empty = await failure(t, unwrap(proxied(new Response(null, { status: 502 })).GET('/health')), 502)
  t.equal(empty.body, undefined, 'no body')
  const other = await failure(t, unwrap(Promise.resolve({ error: { message: 'down' }, response: new Response('{"message":"down"}', { status: 502 }) })), 502)
  t.same([other.body, other.operation], [{ message: 'down' }, undefined], 'the answer of another client: its error body, no operation')
})

t.test('Basic credentials in UTF-8, made without Node\'s Buffer', async (t) => {
  const { url, conformingFetch } = await serve(t, { BASIC_AUTH_USERS: 'jürgen:pä€ss' })
  t.equal(basicAuthorization('jürgen', 'pä€ss'), `Basic ${Buffer.from('jürgen:pä€ss', 'utf8').toString('base64')}`)
  const buffer = globalThis.Buffer
  t.teardown(() => { globalThis.Buffer = buffer })
  // No Buffer while the client makes the request, as in a browser; Node's fetch needs it back.
  const api = createApiClient({
    baseUrl: url,
    credentials: { basic: { username: 'jürgen', password: 'pä€ss' } },
    fetch: async (request) => {
      const made = typeof globalThis.Buffer
      globalThis.Buffer = buffer
      t.equal(made, 'undefined', 'the request was made without Buffer')
      return await conformingFetch(request)
    }
  })
  Reflect.deleteProperty(globalThis, 'Buffer')
  t.equal((await unwrap(api.GET('/users/list-all'))).length, 2, 'accepted by the service')
})

t.test('users(): GET /users in the media type asked, read as it says', async (t) => {
  const { api, sent } = await serve(t)
  const json = await unwrap(api.users())
  t.same(json.map((user) => user.name), ['Isaac Newton', 'Albert Einstein'])
  t.equal(sent.at(-1)?.headers.get('accept'), 'application/json')
  t.same((await unwrap(api.users({ sortby: 'name', accept: 'application/json' }))).map((user) => user.name), ['Albert Einstein', 'Isaac Newton'])
  const text = await unwrap(api.users({ accept: 'text/plain', sortby: 'age' }))
  t.equal(text, 'Albert Einstein, 136, ae@mc2.org, 1905-12-01\nIsaac Newton, 372, isaac@newton.co.uk, 1683-03-01\n')
  t.match(sent.at(-1)?.url, /\/users\?sortby=age$/, 'with the order asked')
  t.same(await unwrap(api.users({ accept: 'application/x-www-form-urlencoded' })), {
    name: ['Isaac Newton', 'Albert Einstein'],
    age: ['372', '136'],
    email: ['isaac@newton.co.uk', 'ae@mc2.org'],
    registration_date: ['1683-03-01', '1905-12-01']
  })
  const bytes = await unwrap(api.users({ accept: 'application/octet-stream' }))
  t.ok(bytes instanceof ArrayBuffer, 'the bytes')
  t.same(JSON.parse(new TextDecoder().decode(bytes)), json, 'the JSON bytes')
  for (const id of [1, 2]) await api.DELETE('/users/{userid}', { params: { path: { userid: id } } })
  t.equal(await unwrap(api.users({ accept: 'text/plain' })), '', 'no users: an empty text')
  t.same(await unwrap(api.users({ accept: 'application/x-www-form-urlencoded' })), {}, 'no users: no fields')
  t.equal((await unwrap(api.users({ accept: 'application/octet-stream' }))).byteLength, 2, 'no users: []')
  const refused = await failure(t, unwrap(api.users({ accept: 'text/html' as 'text/plain' })), 406)
  t.ok(isApiError(refused, 'GET /users'), 'an error of GET /users')
  t.same(formFields('a=1&b=2&a=3&c=x%20y'), { a: ['1', '3'], b: ['2'], c: ['x y'] })
})

t.test('marketing(): POST /marketing as JSON or as a form, one clientInterestedIn key per interest', async (t) => {
  const { api, sent } = await serve(t)
  t.equal(marketingForm(ALP).toString(), 'clientName=Alp&clientEmail=alp%40foo.com&clientAge=26&clientInterestedIn=haskell&clientInterestedIn=mathematics')
  for (const interests of [['haskell', 'mathematics'], ['haskell'], []]) {
    const client = { ...ALP, clientInterestedIn: interests }
    const asJson = await unwrap(api.marketing(client))
    t.equal(sent.at(-1)?.headers.get('content-type'), 'application/json')
    const asForm = await unwrap(api.marketing(client, { as: 'form' }))
    const request = sent.at(-1) as Request
    t.equal(request.headers.get('content-type'), 'application/x-www-form-urlencoded')
    t.equal(await request.text(), marketingForm(client).toString(), 'the form sent')
    t.same(asForm, asJson, `the same e-mail (${interests.length} interests)`)
    t.match(asForm.body, `our latest ${interests.join(', ')} products`)
  }
  await failure(t, unwrap(api.marketing({ ...ALP, clientAge: Number.NaN }, { as: 'form' })), 400)
})
