import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, build, json } from '../helper.js'

/** Resolves once the app turns a request away as overloaded (under-pressure samples once a second). */
async function overloaded (app: FastifyInstance) {
  for (let tries = 0; tries < 50; tries++) {
    if ((await app.inject({ url: '/a' })).statusCode === 503) return
    await sleep(100)
  }
  throw new Error('not overloaded after 5 s')
}

t.test('overload: 503 with Retry-After for every request, /ready says so, /health stays live', async (t) => {
  // A heap threshold of 1 byte: overloaded from the first sample on (within a second).
  const app = await build(t, { PRESSURE_MAX_HEAP_USED_BYTES: '1' })
  await overloaded(app)

  const res = await app.inject({ url: '/hello' })
  assertError(t, res, 503)
  t.equal(res.headers['retry-after'], '5')
  t.match(json(res), { code: 'FST_UNDER_PRESSURE', message: 'The service is overloaded: retry later' })
  assertError(t, await app.inject({ method: 'POST', url: '/users', payload: {} }), 503, 'overloaded')

  const ready = await app.inject({ url: '/ready' })
  assertError(t, ready, 503, 'Not ready: the service is overloaded')
  t.equal(ready.headers['retry-after'], '5')
  t.same(json(await app.inject({ url: '/health' })), { status: 'ok' }, 'liveness is not load')
})

t.test('thresholds not reached, or not set: requests are served', async (t) => {
  const app = await build(t, { PRESSURE_MAX_EVENT_LOOP_DELAY: '0', PRESSURE_MAX_HEAP_USED_BYTES: String(64 * 1024 ** 3) })
  await sleep(1200)
  t.equal((await app.inject({ url: '/hello' })).statusCode, 200)
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
})
