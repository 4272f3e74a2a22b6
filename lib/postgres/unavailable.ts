import type pg from 'pg'
import { RETRY_AFTER_SECONDS, exposed } from '../errors.js'
import { StoreUnavailable } from '../error-codes.js'

/**
 * The error of a request the database could not serve: 503 with `Retry-After`, a message that is
 * safe to show (`expose`), and the driver's error as its cause for the log.
 */
export function storeUnavailable (cause: unknown) {
  return exposed(new StoreUnavailable({ cause }), { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

/**
 * Whether a driver error means the database cannot serve us now (503), rather than a fault of
 * ours (500): no SQLSTATE (refused, reset, timed out, terminated), or SQLSTATE class 08
 * (connection), 53 (insufficient resources), 57 (operator intervention: shutdown, statement
 * timeout) or 58 (system error).
 */
export function isUnavailable (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || /^(08|53|57|58)/.test(code)
}

/** What runs a query: the pool, or a connection taken from it. */
type Queryable = Pick<pg.ClientBase, 'query'>

/** Runs a query of a repository: the database's unavailability becomes a 503 error. */
export async function run<R extends pg.QueryResultRow> (db: pg.Pool | Queryable, query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  try {
    return await (db as Queryable).query<R>(query)
  } catch (err) {
    throw isUnavailable(err) ? storeUnavailable(err) : err
  }
}
