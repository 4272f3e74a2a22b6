import t from 'tap'
import { nextWait, retryAfter, retryPolicy, sleep, type RetryPolicy } from '../../client/retry.js'

// The client's retries without a service: which calls are retried and how, what a Retry-After
// says, how long each wait is, and the wait itself (test/client/index.test.ts has them against
// servers).

const DEFAULTS: RetryPolicy = { attempts: 3, delay: 500, maxDelay: 30_000 }
const answer = (status: number, retryAfter?: string) => new Response(null, { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } })

t.test('retryPolicy(): idempotent calls when the client retries; a POST or a PATCH only when its call says so', async (t) => {
  for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']) t.same(retryPolicy(true, undefined, method), DEFAULTS, `${method}: the defaults`)
  for (const method of ['POST', 'PATCH']) {
    t.equal(retryPolicy(true, undefined, method), undefined, `${method}: not by the client's say`)
    t.same(retryPolicy(undefined, true, method), DEFAULTS, `${method}: when its call says so`)
    t.same(retryPolicy({ attempts: 5 }, true, method), { ...DEFAULTS, attempts: 5 }, `${method}: the client's options then`)
  }
  t.equal(retryPolicy(undefined, undefined, 'GET'), undefined, 'no retry by default')
  t.equal(retryPolicy(false, undefined, 'GET'), undefined, 'the client\'s false')
  t.equal(retryPolicy(true, false, 'GET'), undefined, 'a call\'s false over the client\'s')
  t.same(retryPolicy(false, { delay: 10 }, 'GET'), { ...DEFAULTS, delay: 10 }, 'a call\'s options over the client\'s false')
  t.same(retryPolicy({ attempts: 4, delay: 100, maxDelay: 1000 }, undefined, 'GET'), { attempts: 4, delay: 100, maxDelay: 1000 }, 'the client\'s options')
  t.same(retryPolicy({ attempts: 4, delay: 100 }, { attempts: 2, maxDelay: 50 }, 'DELETE'), { attempts: 2, delay: 100, maxDelay: 50 }, 'the call\'s over the client\'s, option by option')
  t.same(retryPolicy({ attempts: undefined }, { delay: undefined }, 'GET'), DEFAULTS, 'options left undefined: the defaults')
})

t.test('retryAfter(): delta-seconds, or an HTTP-date from now; nothing else', async (t) => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')
  t.equal(retryAfter(answer(503, '1'), now), 1)
  t.equal(retryAfter(answer(503, '0'), now), 0)
  t.equal(retryAfter(answer(429, ' 120 '), now), 120, 'spaces around')
  t.equal(retryAfter(answer(503, 'Wed, 21 Oct 2015 07:28:30 GMT'), now), 30, 'an HTTP-date 30 s ahead')
  t.equal(retryAfter(answer(503, 'Wed, 21 Oct 2015 07:28:00 GMT'), now + 1), 0, 'a date just passed: now')
  t.equal(retryAfter(answer(503, 'Wed, 21 Oct 2015 07:28:01 GMT'), now + 1), 1, 'a part of a second: a whole one')
  t.equal(retryAfter(answer(503, 'Wednesday, 21-Oct-15 07:28:10 GMT'), now), 10, 'the obsolete RFC 850 form')
  for (const text of ['', 'soon', '1.5', '-1', '1e3', 'Wed, 21 Oct 2015 07:28:00', 'Wed, 21 Oct 2015 07:28:00 GMT+0100', 'x GMT']) t.equal(retryAfter(answer(503, text), now), undefined, JSON.stringify(text))
  t.equal(retryAfter(answer(503)), undefined, 'none')
  const ahead = new Date(Date.now() + 60_000).toUTCString()
  t.ok([59, 60].includes(retryAfter(answer(503, ahead)) ?? 0), 'from the current time by default')
})

t.test('nextWait(): Retry-After, else the jittered backoff, within the attempts and the longest wait', async (t) => {
  t.equal(nextWait(DEFAULTS, 1, answer(503, '1'), 0), 1000, 'Retry-After: 1, over a shorter backoff')
  t.equal(nextWait(DEFAULTS, 1, answer(429, '2'), 0.999), 2000, '429 too')
  t.equal(nextWait(DEFAULTS, 1, answer(503, '0'), 0), 250, 'a shorter Retry-After: the backoff')
  t.equal(nextWait(DEFAULTS, 1, answer(503), 0), 250, 'no Retry-After: half the backoff at least')
  t.equal(nextWait(DEFAULTS, 1, answer(503), 1), 500, 'and all of it at most')
  t.equal(nextWait(DEFAULTS, 2, answer(503), 0.5), 750, 'doubled at the second retry')
  t.equal(nextWait({ ...DEFAULTS, attempts: 10 }, 9, undefined, 1), 30_000, 'no answer: the backoff, at most maxDelay')
  t.equal(nextWait({ ...DEFAULTS, attempts: 10 }, 8, undefined, 0), 15_000, 'its half, jittered')
  t.equal(nextWait(DEFAULTS, 3, answer(503, '1'), 0), undefined, 'the attempts spent')
  t.equal(nextWait(DEFAULTS, 2, answer(503, '1'), 0), 1000, 'one left')
  t.equal(nextWait({ ...DEFAULTS, attempts: 1 }, 1, undefined, 0), undefined, 'one attempt: no retry')
  t.equal(nextWait(DEFAULTS, 1, answer(503, '30'), 0), 30_000, 'a Retry-After of maxDelay: waited')
  t.equal(nextWait(DEFAULTS, 1, answer(503, '31'), 0), undefined, 'longer: not waited for')
  for (const status of [200, 204, 400, 401, 404, 500, 502, 504]) t.equal(nextWait(DEFAULTS, 1, answer(status, '1'), 0), undefined, `${status}: no retry`)
  const jittered = nextWait(DEFAULTS, 1, answer(503)) ?? 0
  t.ok(jittered >= 250 && jittered <= 500, 'Math.random() by default')
})

t.test('sleep(): at least the time asked by the clock it reads; the signal ends it at once', async (t) => {
  const started = performance.now()
  await sleep(30)
  t.ok(performance.now() - started >= 30, 'never less, by performance.now()')
  await sleep(0)
  await sleep(-1)
  const early = new AbortController()
  early.abort('stop')
  t.equal(await sleep(60_000, early.signal).then(() => 'resolved', (reason: unknown) => reason), 'stop', 'a signal aborted before: at once, its reason')
  const later = new AbortController()
  const waiting = sleep(60_000, later.signal)
  later.abort(new Error('enough'))
  await t.rejects(waiting, { message: 'enough' }, 'aborted during the wait: at once')
  const kept = new AbortController()
  await sleep(1, kept.signal)
  kept.abort()
  t.pass('a wait done leaves no listener that would reject later')
  // Node's timers may fire a millisecond early by performance.now(); a clock that says so is
  // waited on again, for the rest. A clock of the test's, which each reading moves by `step`.
  const now = performance.now.bind(performance)
  t.teardown(() => { performance.now = now })
  const readings = async (ms: number, step: number) => {
    let clock = 0
    let count = 0
    performance.now = () => { count++; clock += step; return clock }
    await sleep(ms)
    performance.now = now
    return count
  }
  t.equal(await readings(20, 12), 3, 'ended 8 ms early: a second wait, then done')
  t.equal(await readings(20, 20), 2, 'ended on time by the clock: done')
})
