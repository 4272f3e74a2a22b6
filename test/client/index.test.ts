import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { ApiError, createApiClient, ndjsonItems, rangeHeader, unwrap, type Color, type ErrorBody, type User } from '../../client/index.js'
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
async function serve (t: Test) {
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'client-'))
  fs.writeFileSync(path.join(files, 'myfile.txt'), 'Hello, client\n')
  t.teardown(() => fs.rmSync(files, { recursive: true, force: true }))
  const server = await build(t, { API_TOKENS: TOKEN, FILES_DIR: files })
  const { check } = await documentConformance(server)
  await server.listen({ host: '127.0.0.1', port: 0 })
  const conformingFetch = async (request: Request) => {
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
    url,
    api: createApiClient({ baseUrl: url, credentials, fetch: conformingFetch }),
    anonymous: createApiClient({ baseUrl: url, fetch: conformingFetch })
  }
}

/** Every item of an async iterable. */
async function collect<T> (items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

/** The ApiError a call rejects with. */
async function failure (t: Test, call: Promise<unknown>, status: number): Promise<ApiError> {
  const error = await call.then(() => undefined, (err: unknown) => err)
  t.ok(error instanceof ApiError, 'an ApiError')
  t.equal((error as ApiError).status, status, `status ${status}`)
  return error as ApiError
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
  const sorted = await unwrap(api.GET('/users', { params: { query: { sortby: 'age' } } })) as User[]
  t.same(sorted.map((user) => user.name), ['Albert Einstein', 'Isaac Newton'])
  t.match(await unwrap(api.GET('/users', { headers: { accept: 'text/plain' }, parseAs: 'text' })), /^Isaac Newton, 372, /)
  const added = await api.POST('/users', { body: ADA })
  t.equal(added.response.status, 204)
  const location = added.response.headers.get('location')
  t.equal(location, '/users/3', 'Location of the new user')
  const id = Number(location?.split('/').pop())
  t.same(await unwrap(api.GET('/users/{userid}', { params: { path: { userid: id } } })), ADA)
  const replaced = await unwrap(api.PUT('/users/{userid}', { params: { path: { userid: id }, header: { Prefer: 'return=representation' } }, body: { ...ADA, age: 37 } }))
  t.same(replaced, { ...ADA, age: 37 }, 'Prefer: return=representation')
  t.same(await unwrap(api.GET('/user/{userid}', { params: { path: { userid: id } } })), { ...ADA, age: 37 }, '/user is the same store')
  t.equal((await api.DELETE('/user/{userid}', { params: { path: { userid: id } } })).response.status, 204)
  const gone = await failure(t, unwrap(api.GET('/users/{userid}', { params: { path: { userid: id } } })), 404)
  t.equal((gone.body as ErrorBody).message, `No user with userid ${id}`, 'a typed error body')
  const created = await api.POST('/users', { body: ADA, params: { header: { Prefer: 'return=representation' } } })
  t.equal(created.response.status, 201)
  t.same(created.data, ADA)
  t.equal((await api.DELETE('/users/{userid}', { params: { path: { userid: id + 1 } } })).response.status, 204)
})

t.test('Basic credentials for /users/list-all, /users/list-all/now and /list-all/users; typed 401 without them', async (t) => {
  const { api, anonymous } = await serve(t)
  for (const listing of [api.GET('/users/list-all'), api.GET('/users/list-all/now'), api.GET('/list-all/users')]) {
    t.equal((await unwrap(listing))?.length, 2)
  }
  const refused = await failure(t, unwrap(anonymous.GET('/users/list-all')), 401)
  t.equal(refused.response.headers.get('www-authenticate'), 'Basic realm="my-realm"')
  t.equal((refused.body as ErrorBody).statusCode, 401)
})

t.test('Bearer credentials for writes on /products; reads are public', async (t) => {
  const { api, anonymous } = await serve(t)
  t.same(await unwrap(anonymous.GET('/products')), [])
  await failure(t, unwrap(anonymous.POST('/products', { body: { productId: 1, name: 'Apple pie' } })), 401)
  const created = await api.POST('/products', { body: { productId: 1797, name: 'Apple pie' }, params: { header: { Prefer: 'return=representation' } } })
  t.same(created.data, { productId: 1797, name: 'Apple pie' })
  const productid = Number(created.response.headers.get('location')?.split('/').pop())
  t.same(await unwrap(anonymous.GET('/products/{productid}', { params: { path: { productid } } })), { productId: 1797, name: 'Apple pie' })
  t.equal((await api.PUT('/products/{productid}', { params: { path: { productid } }, body: { productId: 1798 } })).response.status, 204)
  await failure(t, unwrap(anonymous.DELETE('/products/{productid}', { params: { path: { productid } } })), 401)
  t.equal((await api.DELETE('/products/{productid}', { params: { path: { productid } } })).response.status, 204)
})

t.test('colors(): a Range pager that follows Next-Range through every page', async (t) => {
  const { api } = await serve(t)
  const names: string[] = []
  for await (const color of api.colors({ field: 'name', limit: 10 })) names.push(color.name)
  t.equal(names.length, COLORS.length, 'every colour once, over 6 pages')
  t.same(names, COLORS.map((color) => color.name).sort((a, b) => a < b ? 1 : a > b ? -1 : 0), 'in the default order, desc')
  const bright: Color[] = []
  for await (const color of api.colors({ field: 'rgb', value: 700, order: 'asc' })) bright.push(color)
  t.ok(bright.length > 0 && bright.every((color) => color.rgb.reduce((a, b) => a + b) >= 700), 'from a value on')
  const grey = api.colors({ field: 'hex', value: '#808080', limit: 1 })
  t.equal((await grey.next()).value?.hex, '#808080', 'a value with # is percent-encoded')
  t.equal(rangeHeader({ field: 'name', value: 'Light Blue', limit: 2, offset: 1, order: 'asc' }), 'name Light%20Blue; limit 2; offset 1; order asc')
  const error = await failure(t, api.colors({ field: 'name', limit: -1 }).next(), 400)
  t.match((error.body as ErrorBody).message, /^Limit must be non-negative/, 'a malformed range is a typed error')
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
  const split = new ReadableStream<Uint8Array>({
    start (controller) {
      for (const chunk of ['{"a":', '1}\n{"a"', ':2}']) controller.enqueue(new TextEncoder().encode(chunk))
      controller.close()
    }
  })
  t.same(await collect(ndjsonItems(split)), [{ a: 1 }, { a: 2 }], 'lines split across chunks, the last without a newline')
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
