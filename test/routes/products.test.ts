import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { assertError, build, json, logSink } from '../helpers/index.js'

/**
 * Production, on the store the suite runs on: production refuses to keep data in memory unless
 * STORE=memory says so, and the PostgreSQL pass (test/groups/01-postgres.ts) gives a database.
 */
const PRODUCTION = { NODE_ENV: 'production', ...(process.env.TEST_STORE === 'postgres' ? {} : { STORE: 'memory' }) }

const TEA = { productId: 7, name: 'Green tea' }
const PIE = { productId: 1797, name: 'Apple pie' }
const BARE = { productId: 3 }

type Headers = Record<string, string>

function post (app: FastifyInstance, payload: unknown, headers: Headers = {}) {
  return app.inject({ method: 'POST', url: '/products', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } })
}

function put (app: FastifyInstance, id: number | string, payload: unknown, headers: Headers = {}) {
  return app.inject({ method: 'PUT', url: `/products/${id}`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } })
}

/** The id of the Location header `/products/<id>`; fails the test on anything else. */
function locationId (t: Test, res: LightMyRequestResponse): number {
  const match = /^\/products\/([1-9]\d*)$/.exec(String(res.headers.location))
  t.ok(match, `Location /products/<id>: ${res.headers.location}`)
  return Number(match?.[1])
}

async function create (t: Test, app: FastifyInstance, item: unknown, headers: Headers = {}): Promise<number> {
  const res = await post(app, item, headers)
  t.equal(res.statusCode, 204, 'created')
  return locationId(t, res)
}

function assertNoContent (t: Test, res: LightMyRequestResponse) {
  t.equal(res.statusCode, 204, 'status 204')
  t.equal(res.body, '', 'empty body')
  t.notOk(res.headers['content-type'], 'no Content-Type for no content')
}

t.test('the store starts empty', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/products' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '[]')
  assertError(t, await app.inject({ url: '/products/1' }), 404, 'No product with productid 1')
})

t.test('POST: 204, empty body, Location; the item is stored exactly as sent', async (t) => {
  const app = await build(t)
  const res = await post(app, TEA)
  assertNoContent(t, res)
  t.equal(res.headers.location, '/products/1')
  t.notOk(res.headers['preference-applied'], 'nothing asked, nothing applied')
  t.equal(locationId(t, await post(app, BARE)), 2)

  const got = await app.inject({ url: '/products/1' })
  t.equal(got.statusCode, 200)
  t.equal(got.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(got.body, '{"productId":7,"name":"Green tea"}', 'its fields in schema order; no id added')
  t.equal((await app.inject({ url: '/products/2' })).body, '{"productId":3}', 'an absent optional field stays absent')
  t.equal((await app.inject({ url: '/products' })).body, '[{"productId":7,"name":"Green tea"},{"productId":3}]', 'listed in id order')
  t.equal((await app.inject({ url: '/products/' })).body, '[{"productId":7,"name":"Green tea"},{"productId":3}]', 'a trailing slash is ignored')

  t.equal(locationId(t, await post(app, { name: 'Key order', productId: 9, extra: true })), 3)
  t.equal((await app.inject({ url: '/products/3' })).body, '{"productId":9,"name":"Key order"}', 'unknown keys are dropped')
  t.equal(locationId(t, await post(app, TEA)), 4, 'the same item twice is two items')
})

t.test('Prefer: return=representation on POST: 201 with the item, Location and Preference-Applied', async (t) => {
  const app = await build(t)
  const res = await post(app, PIE, { prefer: 'return=representation' })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '{"productId":1797,"name":"Apple pie"}')
  t.equal(res.headers.location, '/products/1')
  t.equal(res.headers['preference-applied'], 'return=representation')
  t.same(json(await app.inject({ url: '/products/1' })), PIE, 'stored as well')

  const written = await post(app, { productId: 1, extra: 'dropped' }, { prefer: 'return=representation' })
  t.equal(written.body, '{"productId":1}', 'the representation is what was stored')
})

t.test('the Prefer header is parsed by RFC 7240', async (t) => {
  const app = await build(t)
  const representation = [
    'return=representation',
    'RETURN=Representation',
    'return="representation"',
    'respond-async, return=representation',
    'return=representation; foo=bar',
    '  return = representation ',
    'wait=10,return=representation,handling=strict',
    'return=representation, return=minimal'
  ]
  for (const prefer of representation) {
    const res = await post(app, TEA, { prefer })
    t.equal(res.statusCode, 201, `Prefer: ${prefer}`)
    t.equal(res.headers['preference-applied'], 'return=representation', `Prefer: ${prefer}`)
  }
  const repeated = await app.inject({
    method: 'POST',
    url: '/products',
    payload: JSON.stringify(TEA),
    headers: { 'content-type': 'application/json', prefer: ['respond-async', 'return=representation'] }
  })
  t.equal(repeated.statusCode, 201, 'two Prefer headers are one list')

  const minimal = ['return=minimal', 'return=minimal, return=representation', 'Return=Minimal; x']
  for (const prefer of minimal) {
    const res = await post(app, TEA, { prefer })
    assertNoContent(t, res)
    t.equal(res.headers['preference-applied'], 'return=minimal', `Prefer: ${prefer}`)
  }
  for (const prefer of ['', 'respond-async', 'return', 'return=', 'return=everything', 'returns=representation', 'x-return=representation']) {
    const res = await post(app, TEA, { prefer })
    assertNoContent(t, res)
    t.notOk(res.headers['preference-applied'], `Prefer: ${prefer}: not applied`)
  }
})

t.test('PUT replaces: 204, or 200 with the item when asked; GET sees the replacement', async (t) => {
  const app = await build(t)
  const id = await create(t, app, TEA)
  const res = await put(app, id, PIE)
  assertNoContent(t, res)
  t.notOk(res.headers.location, 'no Location on a replacement')
  t.same(json(await app.inject({ url: `/products/${id}` })), PIE)

  const shown = await put(app, id, BARE, { prefer: 'return=representation' })
  t.equal(shown.statusCode, 200)
  t.equal(shown.body, '{"productId":3}')
  t.equal(shown.headers['preference-applied'], 'return=representation')
  t.equal((await app.inject({ url: `/products/${id}` })).body, '{"productId":3}', 'a field absent from the replacement is gone')

  const minimal = await put(app, id, TEA, { prefer: 'return=minimal' })
  assertNoContent(t, minimal)
  t.equal(minimal.headers['preference-applied'], 'return=minimal')
})

t.test('PUT with an invalid body: 400, the item unchanged', async (t) => {
  const app = await build(t)
  const id = await create(t, app, TEA)
  const invalid: Array<[unknown, string | RegExp]> = [
    [{ nothing: true }, 'productId'],
    [{ productId: '7' }, 'body/productId must be integer'],
    [{ productId: 7.5 }, 'body/productId'],
    [{ productId: 7, name: 5 }, 'body/name must be string'],
    [[TEA], 'body must be object'],
    [null, 'body']
  ]
  for (const [payload, mentions] of invalid) {
    assertError(t, await put(app, id, payload), 400, mentions)
  }
  assertError(t, await app.inject({ method: 'PUT', url: `/products/${id}`, payload: '{"productId":', headers: { 'content-type': 'application/json' } }), 400)
  assertError(t, await app.inject({ method: 'PUT', url: `/products/${id}`, payload: '', headers: { 'content-type': 'application/json' } }), 400)
  t.same(json(await app.inject({ url: `/products/${id}` })), TEA, 'unchanged')
})

t.test('POST with an invalid body: 400 naming the field, nothing stored', async (t) => {
  const app = await build(t)
  assertError(t, await post(app, { name: 'x' }), 400, 'productId')
  assertError(t, await post(app, { productId: '1' }), 400, 'productId')
  assertError(t, await post(app, { productId: 1, name: 5 }), 400, 'name')
  assertError(t, await post(app, { productId: 2 ** 53 }), 400, 'productId')
  assertError(t, await app.inject({ method: 'POST', url: '/products', payload: '{"productId":', headers: { 'content-type': 'application/json' } }), 400)
  t.equal((await app.inject({ url: '/products' })).body, '[]')
  t.equal(locationId(t, await post(app, TEA)), 1, 'refused bodies used no id')
})

t.test('a body of another type: 415', async (t) => {
  const app = await build(t)
  const id = await create(t, app, TEA)
  const bodies: Array<[string | undefined, string]> = [
    ['text/plain', JSON.stringify(PIE)],
    ['application/x-www-form-urlencoded', 'productId=1'],
    ['application/xml', '<product/>'],
    [undefined, JSON.stringify(PIE)]
  ]
  for (const [type, payload] of bodies) {
    const headers = type === undefined ? {} : { 'content-type': type }
    assertError(t, await app.inject({ method: 'POST', url: '/products', payload, headers }), 415, type ?? 'missing')
    assertError(t, await app.inject({ method: 'PUT', url: `/products/${id}`, payload, headers }), 415, type ?? 'missing')
  }
  t.same(json(await app.inject({ url: '/products' })), [TEA], 'nothing written')
})

t.test('DELETE: 204; then GET, PUT and DELETE answer 404', async (t) => {
  const app = await build(t)
  const id = await create(t, app, TEA)
  const keep = await create(t, app, PIE)
  assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }))
  assertError(t, await app.inject({ url: `/products/${id}` }), 404, `No product with productid ${id}`)
  assertError(t, await put(app, id, PIE), 404, `productid ${id}`)
  assertError(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }), 404, `productid ${id}`)
  t.same(json(await app.inject({ url: '/products' })), [PIE], 'the other item stays')
  t.same(json(await app.inject({ url: `/products/${keep}` })), PIE)
})

t.test('a missing id: 404 for GET, PUT and DELETE', async (t) => {
  const app = await build(t)
  for (const id of ['1', '0', '-1', '9007199254740991']) {
    assertError(t, await app.inject({ url: `/products/${id}` }), 404, `productid ${Number(id)}`)
    assertError(t, await put(app, id, TEA), 404)
    assertError(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }), 404)
  }
  t.equal((await app.inject({ url: '/products' })).body, '[]', 'a PUT does not create')
})

t.test('an id that is not an integer: 400 naming the capture', async (t) => {
  const app = await build(t)
  await create(t, app, TEA)
  for (const id of ['abc', '1.5', '1e3', '0x10', '%201', '9007199254740992']) {
    assertError(t, await app.inject({ url: `/products/${id}` }), 400, /^params\/productid must be a decimal integer/)
    assertError(t, await put(app, id, TEA), 400, 'params/productid')
    assertError(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }), 400, 'params/productid')
  }
  t.same(json(await app.inject({ url: '/products/+1' })), TEA, '+1 is the integer 1')
  t.same(json(await app.inject({ url: '/products/001' })), TEA, 'so is 001')
})

t.test('ids are positive, increasing and never reused after a delete', async (t) => {
  const app = await build(t)
  const first = [await create(t, app, TEA), await create(t, app, PIE), await create(t, app, BARE)]
  t.same(first, [1, 2, 3])
  assertNoContent(t, await app.inject({ method: 'DELETE', url: '/products/3' }))
  t.equal(await create(t, app, TEA), 4, 'the last id deleted is not given again')
  for (const id of [1, 2, 4]) assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }))
  t.equal((await app.inject({ url: '/products' })).body, '[]', 'empty again')
  t.equal(await create(t, app, TEA), 5, 'an emptied store goes on counting')
  assertError(t, await app.inject({ url: '/products/1' }), 404, 'productid 1')
})

t.test('50 concurrent POSTs: 50 distinct ids, all readable, each listed once', async (t) => {
  const app = await build(t)
  const items = Array.from({ length: 50 }, (_, i) => ({ productId: i + 1, name: `concurrent ${i}` }))
  const results = await Promise.all(items.map((item) => post(app, item)))
  const ids = results.map((res) => locationId(t, res))
  t.ok(results.every((res) => res.statusCode === 204), 'all 204')
  t.equal(new Set(ids).size, 50, 'distinct ids')
  const reads = await Promise.all(ids.map((id) => app.inject({ url: `/products/${id}` })))
  t.same(reads.map((res) => json(res)), items, 'each id reads its own item')
  const list = json<typeof items>(await app.inject({ url: '/products' }))
  t.equal(list.length, 50)
  for (const item of items) t.equal(list.filter((listed) => listed.name === item.name).length, 1, `${item.name} listed once`)
})

t.test('COLLECTION_MAX_ITEMS: a POST past it is 409 API_ERR_COLLECTION_FULL, nothing stored, concurrent ones too; a DELETE makes room', async (t) => {
  const app = await build(t, { COLLECTION_MAX_ITEMS: '3' })
  const created = await Promise.all(Array.from({ length: 10 }, (_, n) => post(app, { productId: n })))
  t.same(created.map((res) => res.statusCode).sort(), [204, 204, 204, 409, 409, 409, 409, 409, 409, 409], '10 POSTs at once into room for 3')
  assertError(t, created.find((res) => res.statusCode === 409)!, 409, 'The collection is full: it holds 3 items')
  t.equal(json(created.find((res) => res.statusCode === 409)!).code, 'API_ERR_COLLECTION_FULL')
  const full = await post(app, TEA, { prefer: 'return=representation' })
  assertError(t, full, 409, 'delete one to add another')
  t.notOk(full.headers.location, 'no Location')
  t.equal(json<unknown[]>(await app.inject({ url: '/products' })).length, 3, 'nothing more stored')
  const [id] = created.filter((res) => res.statusCode === 204).map((res) => locationId(t, res))
  assertNoContent(t, await put(app, id!, PIE))
  assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }))
  t.ok(await create(t, app, TEA) > 0, 'a DELETE makes room for one')
  t.equal((await post(app, BARE)).statusCode, 409, 'and one only')
  const document = json(await app.inject({ url: '/openapi.json' }))
  t.match(document.paths['/products'].post.responses['409'].description, 'holds 3 products', 'the 409 is documented with the ceiling')
  const unbounded = await build(t, { COLLECTION_MAX_ITEMS: '0' })
  t.notOk(json(await unbounded.inject({ url: '/openapi.json' })).paths['/products'].post.responses['409'], 'COLLECTION_MAX_ITEMS=0: no ceiling, no 409')
})

t.test('concurrent writes lose nothing: PUTs on 20 items, and racing DELETEs of one', async (t) => {
  const app = await build(t)
  const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(t, app, { productId: i })))
  const replaced = await Promise.all(ids.map((id) => put(app, id, { productId: id * 100, name: `v${id}` })))
  t.ok(replaced.every((res) => res.statusCode === 204), 'every PUT acknowledged')
  t.same(json(await app.inject({ url: '/products' })), ids.toSorted((a, b) => a - b).map((id) => ({ productId: id * 100, name: `v${id}` })),
    'every acknowledged write visible, in id order')

  const target = ids[0] as number
  const deletes = await Promise.all(Array.from({ length: 10 }, () => app.inject({ method: 'DELETE', url: `/products/${target}` })))
  t.same(deletes.map((res) => res.statusCode).sort(), [204, ...Array<number>(9).fill(404)], 'exactly one DELETE wins')
  const mixed = await Promise.all([
    put(app, target, TEA),
    post(app, PIE),
    app.inject({ method: 'DELETE', url: `/products/${ids[1]}` }),
    put(app, ids[2] as number, PIE)
  ])
  t.same(mixed.map((res) => res.statusCode), [404, 204, 204, 204])
  t.equal(json(await app.inject({ url: '/products' })).length, 19, '20 - 2 deleted + 1 created')
})

t.test('GET /products/{id}: 406 for an Accept it cannot satisfy; HEAD answers', async (t) => {
  const app = await build(t)
  const id = await create(t, app, TEA)
  assertError(t, await app.inject({ url: `/products/${id}`, headers: { accept: 'text/html' } }), 406, 'application/json')
  assertError(t, await app.inject({ url: '/products', headers: { accept: 'text/plain' } }), 406)
  const head = await app.inject({ method: 'HEAD', url: `/products/${id}` })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('a wrong method on a collection path: 405 with Allow', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ method: 'PATCH', url: '/products/1' })
  assertError(t, res, 405)
  t.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE')
  t.equal((await app.inject({ method: 'DELETE', url: '/products' })).headers.allow, 'GET, HEAD, POST')
})

t.test('without API_TOKENS, writes need no token and the Authorization header is ignored', async (t) => {
  const app = await build(t)
  for (const authorization of ['Bearer whatever', 'Basic c2VydmFudDpzZXJ2ZXI=', 'garbage']) {
    const id = await create(t, app, TEA, { authorization })
    assertNoContent(t, await put(app, id, PIE, { authorization }))
    assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}`, headers: { authorization } }))
  }
})

t.test('with API_TOKENS, POST, PUT and DELETE need a Bearer token; reads stay public', async (t) => {
  // More refusals than the limit on failed authentications allows: that limit is tested on its own.
  const app = await build(t, { API_TOKENS: 'tok-one,tok-two', AUTH_FAILURE_LIMIT: '0' })
  const challenge = (res: LightMyRequestResponse) => {
    assertError(t, res, 401, /authorization/i)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="my-realm"')
  }
  const id = await create(t, app, TEA, { authorization: 'Bearer tok-one' })
  t.equal(await create(t, app, PIE, { authorization: 'Bearer tok-two' }), id + 1, 'either token')

  const refused: Headers[] = [{}, { authorization: 'Bearer tok' }, { authorization: 'Bearer tok-one2' }, { authorization: 'Basic dG9rLW9uZTp4' }, { authorization: 'tok-one' }]
  for (const headers of refused) {
    challenge(await post(app, TEA, headers))
    challenge(await put(app, id, PIE, headers))
    challenge(await app.inject({ method: 'DELETE', url: `/products/${id}`, headers }))
  }
  t.same(json(await app.inject({ url: '/products' })), [TEA, PIE], 'refused writes changed nothing')
  t.same(json(await app.inject({ url: `/products/${id}` })), TEA, 'GET needs no token')

  // Authentication comes before 415, 400 and 404.
  challenge(await app.inject({ method: 'POST', url: '/products', payload: 'x', headers: { 'content-type': 'text/plain' } }))
  challenge(await put(app, 'abc', TEA))
  challenge(await post(app, { nothing: true }))
  challenge(await app.inject({ method: 'DELETE', url: '/products/99' }))

  const auth = { authorization: 'Bearer tok-two' }
  assertNoContent(t, await put(app, id, PIE, auth))
  assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}`, headers: auth }))
  assertError(t, await app.inject({ method: 'DELETE', url: '/products/99', headers: auth }), 404)
})

t.test('the Bearer challenge names AUTH_REALM', async (t) => {
  const app = await build(t, { API_TOKENS: 'x', AUTH_REALM: 'shop' })
  const res = await post(app, TEA)
  assertError(t, res, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="shop"')
})

t.test('production without API_TOKENS: writes refused with the Bearer challenge, a warning at start-up; reads stay public', async (t) => {
  const logs = logSink()
  const app = await build(t, { ...PRODUCTION, BASIC_AUTH_USERS: 'ops:s3cret' }, { logger: logs.logger })
  t.match(logs.entries.filter((line) => line.level === 40), [{ msg: /API_TOKENS is not set/ }], 'one warning')
  for (const headers of [{}, { authorization: 'Bearer whatever' }, { authorization: 'garbage' }] as Headers[]) {
    for (const res of [await post(app, TEA, headers), await put(app, 1, PIE, headers), await app.inject({ method: 'DELETE', url: '/products/1', headers })]) {
      assertError(t, res, 401, /authorization/i)
      t.equal(res.headers['www-authenticate'], 'Bearer realm="my-realm"')
    }
  }
  t.equal((await app.inject({ url: '/products' })).body, '[]', 'nothing was written, and reads need no token')
})

t.test('outside production, no API_TOKENS and no warning about it', async (t) => {
  const logs = logSink()
  await build(t, {}, { logger: logs.logger })
  t.same(logs.entries.filter((line) => /API_TOKENS/.test(String(line.msg))), [])
})

t.test('Range on GET /products: pages by id, as on /colors; no Range, the whole list as before', async (t) => {
  t.test('an empty store: an empty page, with Accept-Ranges and Total-Count 0', async (t) => {
    const app = await build(t)
    const res = await app.inject({ url: '/products', headers: { range: 'id' } })
    t.equal(res.statusCode, 206)
    t.equal(res.body, '[]')
    t.equal(res.headers['accept-ranges'], 'id')
    t.equal(res.headers['total-count'], '0')
    t.notOk(res.headers['content-range'], 'no Content-Range on an empty page')
    t.notOk(res.headers['next-range'])
  })

  t.test('pages, their headers, and following Next-Range through them', async (t) => {
    const app = await build(t)
    const items = Array.from({ length: 150 }, (_, n) => n % 3 === 0 ? { productId: n } : { productId: n, name: `product ${n}` })
    for (const item of items) await create(t, app, item)
    for (const id of [10, 11, 75]) assertNoContent(t, await app.inject({ method: 'DELETE', url: `/products/${id}` }))
    const kept = items.filter((_, n) => ![9, 10, 74].includes(n))
    t.equal((await app.inject({ url: '/products' })).body, JSON.stringify(kept), 'no Range: the whole list, 200')

    const first = await app.inject({ url: '/products', headers: { range: 'id; limit 3' } })
    t.equal(first.statusCode, 206)
    t.equal(first.body, JSON.stringify(kept.slice(0, 3)))
    t.equal(first.headers['content-range'], 'id 1..3')
    t.equal(first.headers['next-range'], 'id 3;limit 3;offset 1;order asc')
    t.equal(first.headers['total-count'], '147')
    const gap = await app.inject({ url: '/products', headers: { range: 'id 10; limit 2' } })
    t.equal(gap.body, JSON.stringify([items[11], items[12]]), 'from a deleted id (10, 11): the next ones')
    t.equal(gap.headers['content-range'], 'id 12..13')
    const last = await app.inject({ url: '/products', headers: { range: 'id; order desc; limit 2' } })
    t.equal(last.body, JSON.stringify([items[149], items[148]]))
    t.equal(last.headers['content-range'], 'id 150..149')

    for (const order of ['asc', 'desc'] as const) {
      for (const limit of [1, 50, 64, 65, 66, 146, 147, 1000]) {
        const seen: unknown[] = []
        let range: string | undefined = `id; limit ${limit}; order ${order}`
        for (let pages = 0; range !== undefined && pages < 200; pages++) {
          const res = await app.inject({ url: '/products', headers: { range } })
          t.equal(res.statusCode, 206)
          seen.push(...json<unknown[]>(res))
          range = res.headers['next-range'] as string | undefined
        }
        t.same(seen, order === 'asc' ? kept : kept.toReversed(), `limit ${limit}, ${order}: every product once, in id order`)
      }
    }
  })

  t.test('a malformed Range: 400 naming the problem; HEAD; 406 first', async (t) => {
    const app = await build(t)
    await create(t, app, TEA)
    const bad = await app.inject({ url: '/products', headers: { range: 'productId 1' } })
    assertError(t, bad, 400, /^Invalid Range: unknown field "productId"; the fields are id/)
    t.equal(bad.headers['accept-ranges'], 'id')
    assertError(t, await app.inject({ url: '/products', headers: { range: 'id; limit' } }), 400, /^Invalid Range Options/)
    const head = await app.inject({ method: 'HEAD', url: '/products', headers: { range: 'id' } })
    t.equal(head.statusCode, 206)
    t.equal(head.body, '')
    t.equal(head.headers['content-range'], 'id 1..1')
    assertError(t, await app.inject({ url: '/products', headers: { range: 'bogus', accept: 'text/html' } }), 406)
  })
})
