import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { assertError, build, json, until } from '../../helpers/index.js'
import { guardedMemoryUsage } from '../../../plugins/edge/under-pressure.js'

/**
 * Lags the event loop by 100 ms at every turn, as a sustained load would, until `app` turns a
 * request away (under-pressure samples once a second: its next sample sees a mean delay of about
 * 90 ms) or `ms` have passed. The lag goes on until it is seen, however busy the machine.
 */
async function overload (app: FastifyInstance, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    const turn = Date.now() + 100
    while (Date.now() < turn) { /* busy */ }
    await sleep(1)
    if ((await app.inject({ url: '/a' })).statusCode === 503) return true
  }
  return false
}

t.test('overload: 503 with Retry-After for every request, /ready says so, /health stays live', async (t) => {
  // A threshold every heap is over: overloaded from under-pressure's first sample on, for good.
  const app = await build(t, { PRESSURE_MAX_HEAP_USED_BYTES: '1' })
  await until(async () => (await app.inject({ url: '/a' })).statusCode === 503)

  const res = await app.inject({ url: '/hello' })
  assertError(t, res, 503)
  t.equal(res.headers['retry-after'], '5')
  t.match(json(res), { code: 'FST_UNDER_PRESSURE', message: 'The service is overloaded: retry later' })
  assertError(t, await app.inject({ method: 'POST', url: '/users', payload: {} }), 503, 'overloaded')
  t.equal((await app.inject({ url: '/docs' })).statusCode, 503, 'every route but the probes')

  const ready = await app.inject({ url: '/ready' })
  assertError(t, ready, 503, 'Not ready: the service is overloaded')
  t.equal(ready.headers['retry-after'], '5')
  t.same(json(await app.inject({ url: '/health' })), { status: 'ok' }, 'liveness is not load')
})

t.test('PRESSURE_MAX_EVENT_LOOP_DELAY: a lagging event loop makes the service overloaded', async (t) => {
  const app = await build(t, { PRESSURE_MAX_EVENT_LOOP_DELAY: '40' })
  // 10 s bounds a hang: the lag is seen at the first sample after it starts, within about a second.
  t.ok(await overload(app, 10_000), 'a lagging event loop makes it overloaded')
})

t.test('thresholds not reached, or not checked: requests are served', async (t) => {
  const app = await build(t, { PRESSURE_MAX_EVENT_LOOP_DELAY: '0', PRESSURE_MAX_HEAP_USED_BYTES: String(64 * 1024 ** 3) })
  // Two seconds of lag hold at least one whole sample interval.
  t.notOk(await overload(app, 2100), 'the same lag, over a whole sample')
  t.equal((await app.inject({ url: '/hello' })).statusCode, 200)
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
})

t.test('a memory sample that cannot be read (EMFILE) is the last good one, logged; never thrown', async (t) => {
  let fail = false
  const sample = { rss: 1, heapTotal: 2, heapUsed: 3, external: 4, arrayBuffers: 5 }
  const read = Object.assign(() => {
    if (fail) throw Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' })
    return { ...sample }
  }, { rss: () => 1 })
  const warnings: unknown[] = []
  const guarded = guardedMemoryUsage(read, { warn: (fields) => { warnings.push(fields) } })
  t.same(guarded(), sample)
  sample.heapUsed = 30
  t.same(guarded(), { ...sample, heapUsed: 30 }, 'a new read each time')
  fail = true
  t.same(guarded(), { ...sample, heapUsed: 30 }, 'the read fails: the last sample')
  t.match(warnings, [{ err: { code: 'EMFILE' } }], 'and a warning')
  t.equal(guarded.rss, read.rss, 'rss() as it was')
})
