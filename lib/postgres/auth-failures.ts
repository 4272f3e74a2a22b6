import type pg from 'pg'
import type { FailureCount, FailureStore } from '../auth-failures.js'
import { run } from './unavailable.js'

/** Ended rows deleted with each failure recorded: more than the two a failure adds, so the table keeps up. */
export const SWEEP_BATCH = 100

const READ = `SELECT key, failures, reset_at FROM auth_failures
  WHERE key = ANY($1::text[]) AND reset_at > $2::timestamptz`

// One statement per failure: the increment is atomic whatever the replicas do at the same time, and
// nothing outlives it (no session state, no lock held between statements: it runs the same through
// a transaction-pooling PgBouncer). A row whose window has ended starts a new one. The keys are
// locked in one order (sorted) by every statement, so two statements never wait for each other.
const RECORD = `INSERT INTO auth_failures AS counted (key, failures, reset_at)
  SELECT key, 1, $3::timestamptz FROM unnest($1::text[]) AS key ORDER BY key
  ON CONFLICT (key) DO UPDATE SET
    failures = CASE WHEN counted.reset_at > $2::timestamptz THEN counted.failures + 1 ELSE 1 END,
    reset_at = CASE WHEN counted.reset_at > $2::timestamptz THEN counted.reset_at ELSE excluded.reset_at END`

// A statement of its own, not a CTE of the one above: there, a row it deleted could be one that
// another statement was about to count, while that one held a key the insert waited for. Rows
// being counted are skipped (SKIP LOCKED), so this one never waits either.
const SWEEP = `DELETE FROM auth_failures WHERE key IN (
  SELECT key FROM auth_failures WHERE reset_at <= $1::timestamptz
  ORDER BY reset_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`

/**
 * The failure counts in the table `auth_failures` (migrations/003), shared by every replica on the
 * database. Times are the service's clock, passed in: the windows are the same whichever replica
 * counts, as long as their clocks agree to well within a window. Unnamed statements: no prepared
 * statement lives in a session. A database that cannot serve us throws the store's 503 (`run`).
 */
export function postgresFailureStore (pool: pg.Pool): FailureStore {
  return {
    async read (keys, now) {
      const { rows } = await run<{ key: string, failures: number, reset_at: Date }>(pool, { text: READ, values: [keys, new Date(now)] })
      return new Map(rows.map((row): [string, FailureCount] => [row.key, { failures: row.failures, resetAt: row.reset_at.getTime() }]))
    },
    async record (keys, now, windowMs) {
      await run(pool, { text: RECORD, values: [[...new Set(keys)], new Date(now), new Date(now + windowMs)] })
      await run(pool, { text: SWEEP, values: [new Date(now)] })
    }
  }
}
