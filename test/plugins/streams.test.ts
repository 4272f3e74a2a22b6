import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, baseUrl, build, openStream, until } from '../helpers/index.js'

// The cap on streamed answers per client address (plugins/streams.ts, lib/stream-slots.ts):
// NDJSON and long lists alike take a slot before their status is sent, and give it back when over.

const BASIC = { authorization: `Basic ${Buffer.from('servant:server').toString('base64')}` }

/** Enough users for a list longer than a whole body (lib/list-body.ts's WHOLE_BODY). */
async function fill (app: FastifyInstance, count = 800) {
  for (let n = 0; n < count; n++) {
    const user = { name: `user ${n}`, age: n % 90, email: `user${n}@example.org`, registration_date: '2026-11-22' }
    const res = await app.inject({ method: 'POST', url: '/users', payload: user })
    if (res.statusCode !== 204) throw new Error(`POST /users: ${res.statusCode}`)
  }
}

t.test('STREAMS_PER_CLIENT: past it a stream is refused with 429 and Retry-After, before its status; one over frees a slot', async (t) => {
  // The service's own instance (build() registers it under the root), for its decorator.
  let service: FastifyInstance | undefined
  const app = await build(t, { STREAMS_PER_CLIENT: '2' }, { onRoute (this: FastifyInstance) { service ??= this } })
  const openFrom = (address: string) => service!.streamSlots.openFrom(address)
  await fill(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  // Two streams their client does not read. (A long list holds its slot the same way: test/lib/list-body.test.ts.)
  const url = `${baseUrl(app)}/userStream?count=10000000`
  const held = [await openStream(url), await openStream(url)]
  t.same(held.map((res) => res.statusCode), [200, 200], 'both streaming')
  t.equal(openFrom('127.0.0.1'), 2)
  const list = await app.inject({ url: '/users', remoteAddress: '192.0.2.8' })
  t.equal(list.statusCode, 200)
  t.notOk(list.headers['content-length'], 'the users are a long list, streamed')

  for (const url of ['/userStream?count=10000000', '/userStream?count=3', '/users', '/users?sortby=name', '/users/list-all', '/list-all/users']) {
    const res = await app.inject({ url, headers: url.includes('list-all') ? BASIC : {} })
    assertError(t, res, 429, /2 streamed answers open already/)
    t.equal(res.json().code, 'API_ERR_TOO_MANY_STREAMS', url)
    t.equal(res.headers['retry-after'], '5', `${url}: Retry-After`)
  }
  t.equal((await app.inject({ url: '/products' })).statusCode, 200, 'a short list is sent whole, and takes no slot')
  t.equal((await app.inject({ url: '/users', headers: { range: 'id; limit 10' } })).statusCode, 206, 'nor does a short page')
  t.equal((await app.inject({ method: 'HEAD', url: '/userStream?count=10000000' })).statusCode, 200, 'HEAD streams nothing: no slot')
  t.equal((await app.inject({ url: '/userStream?count=3', remoteAddress: '192.0.2.9' })).statusCode, 200, 'another address has slots of its own')
  t.equal(openFrom('127.0.0.1'), 2, 'none of that took a slot')

  held[0]?.socket.destroy()
  await until(() => openFrom('127.0.0.1') === 1)
  t.pass('a stream whose client left gives its slot back')
  const again = await app.inject({ url: '/userStream?count=3' })
  t.equal(again.statusCode, 200, 'and the next stream gets it')
  t.equal(again.body.split('\n').length, 4, 'whole, and over: its slot given back too')
  t.equal(openFrom('127.0.0.1'), 1)
  held[1]?.socket.destroy()
  await until(() => openFrom('127.0.0.1') === 0)
  t.pass('nothing is left counted')
})
