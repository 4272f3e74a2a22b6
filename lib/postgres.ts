import { createRequire } from 'node:module'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import createError from '@fastify/error'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import { projectRoot, type Config } from './config.js'
import { RETRY_AFTER_SECONDS, exposed } from './errors.js'
import type { Repository } from './repository.js'

// postgrator is an ES module only. It is require()d (Node loads an ES module that way) rather than
// imported, so that the production bundle, CommonJS, loads it from node_modules as tsc's dist/ does,
// its default export the class either way; esbuild leaves such a require alone.
const { default: Postgrator } = createRequire(path.join(import.meta.dirname, 'postgres.js'))('postgrator') as typeof import('postgrator')

const StoreUnavailableError = createError('FST_ERR_STORE_UNAVAILABLE', 'The database is unavailable: retry later', 503)

/**
 * The error of a request the database could not serve: 503 with `Retry-After`, a message that is
 * safe to show (`expose`), and the driver's error as its cause for the log.
 */
export function storeUnavailable (cause: unknown) {
  return exposed(new StoreUnavailableError({ cause }), { 'retry-after': String(RETRY_AFTER_SECONDS) })
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

/** Runs a query of a repository: the database's unavailability becomes a 503 error. */
export async function run<R extends pg.QueryResultRow> (pool: pg.Pool, query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(query)
  } catch (err) {
    throw isUnavailable(err) ? storeUnavailable(err) : err
  }
}

/** The tables of the collections, created by migrations/. */
export type CollectionTable = 'users' | 'products'

/**
 * A collection in a PostgreSQL table `(id bigint identity, item json)`: ids from the identity's
 * sequence (unique across every replica, increasing, never reused, even after a rolled-back
 * insert), items stored as the JSON text of the validated body. `json`, not `jsonb`: the text is
 * kept as given, and a `\u0000` escape (valid JSON, which jsonb refuses) is stored like any other.
 * Every operation is one statement, so it is atomic; prepared once per connection.
 */
export function postgresRepository<T> (pool: pg.Pool, table: CollectionTable): Repository<T> {
  const statement = (name: string, text: string) => (values: unknown[] = []) => ({ name: `${table}-${name}`, text, values })
  const list = statement('list', `SELECT item FROM ${table} ORDER BY id`)
  const get = statement('get', `SELECT item FROM ${table} WHERE id = $1`)
  const create = statement('create', `INSERT INTO ${table} (item) VALUES ($1) RETURNING id`)
  const replace = statement('replace', `UPDATE ${table} SET item = $2 WHERE id = $1`)
  const remove = statement('delete', `DELETE FROM ${table} WHERE id = $1`)

  return {
    async list () {
      const { rows } = await run<{ item: T }>(pool, list())
      return rows.map((row) => row.item)
    },
    async get (id) {
      const { rows } = await run<{ item: T }>(pool, get([id]))
      return rows[0]?.item
    },
    async create (item) {
      const { rows } = await run<{ id: string }>(pool, create([JSON.stringify(item)]))
      return Number(rows[0]!.id)
    },
    async replace (id, item) {
      return (await run(pool, replace([id, JSON.stringify(item)]))).rowCount === 1
    },
    async delete (id) {
      return (await run(pool, remove([id]))).rowCount === 1
    }
  }
}

/**
 * The URL with every password in it masked, to name the database in messages and logs: the one
 * before the host, and any query parameter that holds one (`?password=`, `sslpassword=`).
 */
export function redactedUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    for (const name of [...parsed.searchParams.keys()]) {
      if (/pass/i.test(name)) parsed.searchParams.set(name, '***')
    }
    // URLSearchParams writes the mask percent-encoded.
    return parsed.toString().replaceAll('%2A%2A%2A', '***')
  } catch {
    return 'the database of DATABASE_URL'
  }
}

/** A connection of its own for start-up, retried while `config.DATABASE_STARTUP_TIMEOUT` lasts. */
export async function connectWithRetries (config: Config, log: FastifyBaseLogger): Promise<pg.Client> {
  const url = config.DATABASE_URL!
  const deadline = Date.now() + config.DATABASE_STARTUP_TIMEOUT
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(delay * 2, 2000)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: config.DATABASE_STATEMENT_TIMEOUT })
    try {
      await client.connect()
      return client
    } catch (err) {
      const reason = (err as Error).message
      if (Date.now() + delay > deadline) {
        throw new Error(`The database at ${redactedUrl(url)} is unreachable (attempts: ${attempt}): ${reason}`, { cause: err })
      }
      log.warn({ database: redactedUrl(url), attempt, reason }, 'database not reachable yet: retrying')
      await sleep(delay)
    }
  }
}

/** Any number will do, as long as nothing else locks it: "servant!" in ASCII. */
const MIGRATION_LOCK = 0x73657276616e7421n

/**
 * Brings the database to the latest schema of migrations/ (postgrator, numbered SQL files), in one
 * transaction under an advisory lock: replicas that start together apply each migration once, the
 * others wait and find nothing left to do, and a failed migration leaves nothing half-applied.
 */
export async function migrate (client: pg.Client, log: Pick<FastifyBaseLogger, 'info'>): Promise<void> {
  const { rows } = await client.query<{ database: string }>('SELECT current_database() AS database')
  const postgrator = new Postgrator({
    migrationPattern: path.join(projectRoot, 'migrations', '*.sql'),
    driver: 'pg',
    database: rows[0]!.database,
    schemaTable: 'schemaversion',
    execQuery: (query) => client.query(query)
  })
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    const applied = await postgrator.migrate()
    await client.query('COMMIT')
    for (const { version, name } of applied) log.info({ version, name }, 'database migration applied')
  } catch (err) {
    await client.query('ROLLBACK')
    throw err
  }
}
