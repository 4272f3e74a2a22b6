import type pg from 'pg'
import { DurationHistogram } from '../request-durations.js'
import { family } from '../metrics/text-format.js'

/**
 * Bounds of the pool's acquisitions, in seconds: an idle connection is handed over in well under a
 * millisecond, a new one takes a connection's set-up (a few ms on a network, more with TLS), and a
 * wait for one that is busy lasts up to DATABASE_STATEMENT_TIMEOUT (5 s by default), past which
 * the request fails.
 */
const ACQUIRE_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Bounds of the queries, in seconds: a read by id takes a fraction of a millisecond on the loopback, a list's statements more; the client's bound is DATABASE_STATEMENT_TIMEOUT. */
const QUERY_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

type Callback = (err: Error | undefined, result?: unknown) => void

/** The time since `start` (performance.now()), in seconds. */
const since = (start: number) => (performance.now() - start) / 1000

/**
 * Measures a pool of pg (STORE=postgres): its connections (`db_pool_connections` by state,
 * `db_pool_max_connections`, `db_pool_waiting_requests`, read from the pool when scraped), the
 * time each acquisition takes (`db_pool_acquire_duration_seconds`: every `pool.connect()`, those
 * that `pool.query()` makes included, failed ones too: a wait that ends in the pool's timeout is
 * the one that matters) and the time of each query (`db_query_duration_seconds`: from the call to
 * its result or error, on every connection the pool hands out).
 *
 * Acquisitions are timed by wrapping this pool's `connect` (pg-pool's `query` calls it too), and
 * queries by wrapping `query` on each connection as it is first handed out, so that nothing of pg
 * itself is changed and other pools in the process are not measured. A query given as a
 * Submittable (a cursor or stream object of its own, which the store does not use) is not timed.
 * The cost is a clock read and a histogram observation per acquisition and per query; with
 * METRICS off nothing is wrapped.
 */
export function poolMetrics (pool: pg.Pool) {
  const acquisitions = new DurationHistogram('db_pool_acquire_duration_seconds',
    'Time to get a connection from the PostgreSQL pool, in seconds, failed attempts included', ACQUIRE_BOUNDS)
  const queries = new DurationHistogram('db_query_duration_seconds', 'Time of each query the store sends to PostgreSQL, in seconds, until its result or error', QUERY_BOUNDS)
  const acquired = acquisitions.series()
  const queried = queries.series()
  const timed = new WeakSet<pg.PoolClient>()

  /** The connection's `query`, timed; once per connection. */
  function timeQueries (client: pg.PoolClient | undefined): void {
    if (client === undefined || timed.has(client)) return
    timed.add(client)
    const query = client.query as (config: unknown, values?: unknown, callback?: unknown) => unknown
    client.query = function timedQuery (config: unknown, values?: unknown, callback?: unknown) {
      if (typeof (config as { submit?: unknown } | null)?.submit === 'function') return query.call(client, config, values, callback)
      const start = performance.now()
      const observe = () => { queried.observe(since(start)) }
      if (typeof values === 'function') {
        return query.call(client, config, (err: Error | undefined, result: unknown) => { observe(); (values as Callback)(err, result) })
      }
      if (typeof callback === 'function') {
        return query.call(client, config, values, (err: Error | undefined, result: unknown) => { observe(); (callback as Callback)(err, result) })
      }
      const result = query.call(client, config, values) as Promise<unknown>
      // Observed beside the caller's own handlers: the promise the caller gets is pg's, unchanged.
      result.then(observe, observe)
      return result
    } as typeof client.query
  }

  const connect = pool.connect as (callback?: (err: Error | undefined, client?: pg.PoolClient, done?: unknown) => void) => Promise<pg.PoolClient> | undefined
  pool.connect = function timedConnect (callback?: (err: Error | undefined, client?: pg.PoolClient, done?: unknown) => void) {
    const start = performance.now()
    if (callback === undefined) {
      return (connect.call(pool) as Promise<pg.PoolClient>).then((client) => {
        acquired.observe(since(start))
        timeQueries(client)
        return client
      }, (err: unknown) => {
        acquired.observe(since(start))
        throw err
      })
    }
    return connect.call(pool, (err, client, done) => {
      acquired.observe(since(start))
      if (err === undefined || err === null) timeQueries(client)
      callback(err, client, done)
    })
  } as typeof pool.connect

  return {
    /** The pool's series in the text format, its gauges read now. */
    render (): string {
      const total = pool.totalCount
      const idle = pool.idleCount
      return [
        family('db_pool_connections', 'gauge', 'Connections of the PostgreSQL pool, by state: idle, or used (handed out, or being opened)',
          [[{ state: 'idle' }, idle], [{ state: 'used' }, total - idle]]),
        family('db_pool_max_connections', 'gauge', 'The most connections the PostgreSQL pool opens (DATABASE_POOL_SIZE)', [[{}, pool.options.max!]]),
        family('db_pool_waiting_requests', 'gauge', 'Requests waiting for a connection of the PostgreSQL pool', [[{}, pool.waitingCount]]),
        acquisitions.render(),
        queries.render()
      ].join('')
    }
  }
}
