import { createRequire } from 'node:module'
import path from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type pg from 'pg'
import type { Config } from '../config/schema.js'
import { projectRoot } from '../project-root.js'
import { connectWithRetries, connectionParameters, redactedUrl } from './connect.js'
import { NoDatabase, SchemaBehind } from '../error-codes.js'

// postgrator is an ES module only. It is require()d (Node loads an ES module that way) rather than
// imported, so that the production bundle, CommonJS, loads it from node_modules as tsc's dist/ does,
// its default export the class either way; esbuild leaves such a require alone.
const { default: Postgrator } = createRequire(path.join(import.meta.dirname, 'migrations.js'))('postgrator') as typeof import('postgrator')

/** Any number will do, as long as nothing else locks it: "servant!" in ASCII. */
const MIGRATION_LOCK = 0x73657276616e7421n

/** postgrator on `client`'s database, with the migrations of migrations/. */
async function migrator (client: pg.Client) {
  const { rows } = await client.query<{ database: string }>('SELECT current_database() AS database')
  return new Postgrator({
    migrationPattern: path.join(projectRoot, 'migrations', '*.sql'),
    driver: 'pg',
    database: rows[0]!.database,
    schemaTable: 'schemaversion',
    execQuery: (query) => client.query(query)
  })
}

/**
 * Released migrations whose comments were reworded, with the checksum of the text a database may
 * have run: that record, and only that one, is carried forward to the file's present checksum
 * before postgrator compares them (a file that changed in any other way is still refused).
 * migrations/README.md says why and when.
 */
export const REWORDED_MIGRATIONS: ReadonlyMap<number, string> = new Map([
  [1, 'a02be7b547f492bb5b30560d31ee3631'],
  [2, '211b014cba20f4f0283a6382ed814f5f']
])

/** The records of REWORDED_MIGRATIONS' former texts, set to the files' checksums (postgrator's). */
async function carryRewordedChecksums (client: pg.Client, postgrator: Awaited<ReturnType<typeof migrator>>): Promise<void> {
  const { rows } = await client.query<{ exists: boolean }>('SELECT to_regclass(\'schemaversion\') IS NOT NULL AS exists')
  if (!rows[0]!.exists) return
  for (const migration of await postgrator.getMigrations()) {
    const former = REWORDED_MIGRATIONS.get(migration.version)
    if (former === undefined || migration.action !== 'do' || migration.md5 === undefined) continue
    await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = $2 AND md5 = $3', [migration.md5, migration.version, former])
  }
}

/**
 * Brings the database to the latest schema of migrations/ (postgrator, numbered SQL files), in one
 * transaction under a transaction-scoped advisory lock: replicas that start together apply each
 * migration once, the others wait and find nothing left to do, and a failed migration leaves
 * nothing half-applied. Nothing outlives the transaction (no session lock, no SET), so it runs as
 * well through a transaction-pooling PgBouncer, which keeps a transaction on one server connection.
 */
export async function migrate (client: pg.Client, log: Pick<FastifyBaseLogger, 'info'>): Promise<void> {
  const postgrator = await migrator(client)
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await carryRewordedChecksums(client, postgrator)
    const applied = await postgrator.migrate()
    await client.query('COMMIT')
    for (const { version, name } of applied) log.info({ version, name }, 'database migration applied')
  } catch (err) {
    await client.query('ROLLBACK')
    throw err
  }
}

/**
 * migrate() by the role of `config`'s migration URL (DATABASE_MIGRATION_URL, else DATABASE_URL),
 * connected as `client`. A refusal for want of a privilege (SQLSTATE 42501: `permission denied for
 * schema public`, which since PostgreSQL 15 only the database's owner may create in; a table of
 * another owner) says which setting runs them as a role that may; `atStart`: how else the service
 * may start, with the migrations applied by a release step.
 */
async function migrateAsConfigured (client: pg.Client, config: Config, log: Pick<FastifyBaseLogger, 'info'>, atStart: boolean): Promise<void> {
  try {
    await migrate(client, log)
  } catch (err) {
    if ((err as { code?: unknown }).code !== '42501') throw err
    const refused = `may not change the schema (${(err as Error).message})`
    if (config.DATABASE_MIGRATION_URL !== undefined) {
      throw new Error(`The role ${client.user} of DATABASE_MIGRATION_URL ${refused}: give DATABASE_MIGRATION_URL a role that owns the schema (deploy/README.md has the grants)`)
    }
    const instead = atStart ? ', or apply the migrations as such a role with `npm run migrate` (`node dist/bundle/server.js migrate` in the image) and start with MIGRATE_ON_START=false' : ''
    throw new Error(`The role ${client.user} of DATABASE_URL ${refused}: set DATABASE_MIGRATION_URL to a role that may (the schema's owner)${instead}`)
  }
}

/** The database's migration version, and the latest of migrations/: equal when it is up to date. */
export async function schemaVersions (client: pg.Client): Promise<{ database: number, latest: number }> {
  const postgrator = await migrator(client)
  const [database, latest] = await Promise.all([postgrator.getDatabaseVersion(), postgrator.getMaxVersion()])
  return { database: Number(database ?? 0), latest: Number(latest) }
}

/** The database is not at the schema this version of the service needs: the migrations must run first. */

/**
 * The database of `config` made ready for the service at start-up: migrated with
 * DATABASE_MIGRATION_URL (else DATABASE_URL) when MIGRATE_ON_START, else checked to be at the
 * latest migration, so that a replica never serves an older schema than its code needs.
 *
 * DATABASE_URL is reached first as the pool will reach it, with what the pool sets when connecting
 * (lib/postgres/connect.ts): a pooler in front of it that refuses that (PgBouncer, without
 * DATABASE_POOLER=transaction) stops the start here, naming the setting, where the service would
 * otherwise start and answer every request that needs the store with a 503. The migrations have a
 * connection of their own, without the pool's statement_timeout: a schema change may take longer
 * than a request.
 */
export async function prepareDatabase (config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<void> {
  const parameters = connectionParameters(config)
  if (!config.MIGRATE_ON_START) {
    const client = await connectWithRetries(config, log, config.DATABASE_URL, parameters)
    try {
      const { database, latest } = await schemaVersions(client)
      // None applied at all: more likely DATABASE_URL names another database than the service's.
      const none = database === 0 ? ', or name in DATABASE_URL the database they were applied to' : ''
      if (database < latest) throw new SchemaBehind(redactedUrl(config.DATABASE_URL!), database, latest, none)
    } finally {
      await client.end()
    }
    return
  }
  // Behind DATABASE_POOLER=transaction the pool sets nothing a pooler could refuse: no try.
  if (parameters.statement_timeout !== undefined) await (await connectWithRetries(config, log, config.DATABASE_URL, parameters)).end()
  const client = await connectWithRetries(config, log, config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL)
  try {
    await migrateAsConfigured(client, config, log, true)
  } finally {
    await client.end()
  }
}

/** No database to migrate: neither DATABASE_MIGRATION_URL nor DATABASE_URL is set. */

/**
 * The migrations of migrations/ applied to the database of DATABASE_MIGRATION_URL (else
 * DATABASE_URL), reached with retries as at start-up: the release step's command. Answers the
 * database's migration version after.
 */
export async function migrateDatabase (config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<number> {
  const url = config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL
  if (url === undefined) throw new NoDatabase()
  const client = await connectWithRetries(config, log, url)
  try {
    await migrateAsConfigured(client, config, log, false)
    return (await schemaVersions(client)).database
  } finally {
    await client.end()
  }
}
