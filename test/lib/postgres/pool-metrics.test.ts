import net, { type AddressInfo } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { poolMetrics } from '../../../lib/postgres/pool-metrics.js'
import { testPool } from '../../helpers/postgres.js'
import { testDatabase } from '../../helpers/index.js'

/** The samples of the text format, by name and label set as written (`name{a="b"}`, or `name`). */
function read (text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    samples.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return samples
}

/** What the metrics of a pool say now: its gauges, and the count and sum of each histogram. */
function observed (metrics: ReturnType<typeof poolMetrics>) {
  const samples = read(metrics.render())
  return {
    idle: samples.get('db_pool_connections{state="idle"}'),
    used: samples.get('db_pool_connections{state="used"}'),
    max: samples.get('db_pool_max_connections'),
    waiting: samples.get('db_pool_waiting_requests'),
    acquisitions: samples.get('db_pool_acquire_duration_seconds_count'),
    queries: samples.get('db_query_duration_seconds_count'),
    queriesUnder25ms: samples.get('db_query_duration_seconds_bucket{le="0.025"}'),
    querySeconds: samples.get('db_query_duration_seconds_sum')
  }
}

/** The cumulative count of each bucket of the query histogram, by its bound in seconds (Infinity last). */
function queryBuckets (metrics: ReturnType<typeof poolMetrics>): Map<number, number> {
  const buckets = new Map<number, number>()
  for (const [series, count] of read(metrics.render())) {
    const bound = /^db_query_duration_seconds_bucket\{le="([^"]+)"\}$/.exec(series)?.[1]
    if (bound !== undefined) buckets.set(Number(bound), count)
  }
  return buckets
}

t.test('the pool\'s gauges: idle, used, the most it opens, the requests waiting', async (t) => {
  const pool = testPool(t, await testDatabase(), { max: 2 })
  const metrics = poolMetrics(pool)
  t.match(observed(metrics), { idle: 0, used: 0, max: 2, waiting: 0, acquisitions: 0, queries: 0 }, 'a new pool: every series, at 0')
  const first = await pool.connect()
  const second = await pool.connect()
  t.match(observed(metrics), { idle: 0, used: 2, waiting: 0, acquisitions: 2 }, 'two connections handed out')
  const third = pool.connect()
  t.match(observed(metrics), { used: 2, waiting: 1, acquisitions: 2 }, 'a third request waits')
  first.release()
  ;(await third).release()
  t.match(observed(metrics), { idle: 1, used: 1, waiting: 0, acquisitions: 3 }, 'the waiting request served, its connection back')
  second.release()
  t.match(observed(metrics), { idle: 2, used: 0 }, 'all back, idle')
})

t.test('each query is timed, whichever way it is sent, failed ones too; a Submittable passes untimed', async (t) => {
  const pool = testPool(t, await testDatabase())
  const metrics = poolMetrics(pool)
  const client = await pool.connect()
  t.teardown(() => client.release())
  // How long each query took by the test's clock, in seconds: never less than the metrics measure
  // of it, which starts after the call and ends before the caller hears. How long is the machine's
  // business: each is checked against its own.
  const durations: number[] = []
  const timed = async <T> (query: () => Promise<T>): Promise<T> => {
    const start = performance.now()
    try {
      return await query()
    } finally {
      durations.push((performance.now() - start) / 1000)
    }
  }
  await timed(() => client.query('SELECT 1'))
  t.match(observed(metrics), { queries: 1 }, 'a promise')
  await timed(() => new Promise((resolve, reject) => client.query('SELECT 1', (err) => err === undefined || err === null ? resolve(undefined) : reject(err))))
  t.match(observed(metrics), { queries: 2 }, 'a callback after the text')
  const answer = await timed(() => new Promise((resolve, reject) => client.query<{ n: number }>('SELECT $1::int AS n', [7], (err, result) => err === undefined || err === null ? resolve(result.rows[0]?.n) : reject(err))))
  t.equal(answer, 7, 'the callback gets the result')
  t.match(observed(metrics), { queries: 3 }, 'a callback after the values')
  await t.rejects(timed(() => client.query('SELECT no_such_column')), { code: '42703' }, 'the caller sees the error as pg gives it')
  t.match(observed(metrics), { queries: 4 }, 'a failed query')
  const before = queryBuckets(metrics)
  t.ok([...before].every(([bound, count]) => count >= durations.filter((seconds) => seconds <= bound).length && count <= 4),
    `each of the four in a bucket of its duration (${durations.map((seconds) => `${(seconds * 1000).toFixed(1)} ms`).join(', ')} by the test's clock)`)
  await timed(() => client.query('SELECT pg_sleep(0.05)'))
  const slept = durations.at(-1)!
  const after = queryBuckets(metrics)
  // At least 50 ms by either clock, at most `slept` by the metrics': in no bucket below 50 ms, in
  // every one from `slept` up (in those between, either).
  const certain = [...after].filter(([bound]) => bound < 0.05 || bound >= slept)
  t.same(certain.map(([bound, count]) => [bound, count - before.get(bound)!]), certain.map(([bound]) => [bound, bound < 0.05 ? 0 : 1]),
    `a query of 50 ms in the bucket of its duration (${(slept * 1000).toFixed(1)} ms by the test's clock)`)
  t.match(observed(metrics), { queries: 5, queriesUnder25ms: before.get(0.025) }, 'five timed, the fifth not among those under 25 ms')
  t.ok(observed(metrics).querySeconds! >= 0.05, 'and in the sum')
  t.ok(observed(metrics).querySeconds! <= durations.reduce((sum, seconds) => sum + seconds), 'a sum of seconds, no more than the test\'s clock took')

  const submitted = new pg.Query('SELECT 1')
  t.equal(client.query(submitted), submitted, 'a Submittable is pg\'s to run')
  await new Promise((resolve) => submitted.on('end', resolve))
  t.match(observed(metrics), { queries: 5 }, 'not timed')

  await pool.query('SELECT 1')
  t.match(observed(metrics), { acquisitions: 2, queries: 6 }, 'pool.query: its acquisition and its query')
})

t.test('an acquisition that fails is timed too; another pool of the process is not measured', async (t) => {
  // A port that takes connections and never answers: the pool's timeout ends the wait.
  const silent = net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const unreachable = testPool(t, `postgres://nobody@127.0.0.1:${(silent.address() as AddressInfo).port}/nothing`, { connectionTimeoutMillis: 100 })
  const metrics = poolMetrics(unreachable)
  await t.rejects(unreachable.connect(), 'no connection')
  await t.rejects(new Promise((resolve, reject) => { unreachable.connect((err) => err === undefined || err === null ? resolve(undefined) : reject(err)) }), 'no connection, with a callback')
  const { acquisitions } = observed(metrics)
  t.equal(acquisitions, 2, 'both attempts timed')
  t.ok(read(metrics.render()).get('db_pool_acquire_duration_seconds_sum')! >= 0.2, 'each as long as the timeout')

  const other = testPool(t, await testDatabase())
  await other.query('SELECT 1')
  t.match(observed(metrics), { acquisitions: 2, queries: 0 }, 'the other pool\'s query is not this one\'s')
})
