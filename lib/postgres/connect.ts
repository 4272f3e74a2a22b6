import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import type { Config } from '../config/schema.js'

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

/**
 * What the service's pool sets on each connection when it connects (plugins/collections/postgres.ts):
 * statement_timeout, unless DATABASE_POOLER=transaction, whose pooler would refuse it.
 */
export function connectionParameters (config: Config): Pick<pg.ClientConfig, 'statement_timeout'> {
  return config.DATABASE_POOLER === 'transaction' ? {} : { statement_timeout: config.DATABASE_STATEMENT_TIMEOUT }
}

/**
 * Whether `err` is a pooler's refusal of a parameter set when connecting: PgBouncer ends such a
 * connection with `unsupported startup parameter: statement_timeout` (SQLSTATE 08P01, a protocol
 * violation), where PostgreSQL itself would have taken it.
 */
export function isStartupParameterRefusal (err: unknown): boolean {
  const { code, message } = err as { code?: unknown, message?: unknown }
  return code === '08P01' && typeof message === 'string' && message.startsWith('unsupported startup parameter')
}

/**
 * Connections PostgreSQL refuses for good, by SQLSTATE (PostgreSQL's errcodes.txt): no retry makes
 * them pass, so the start stops at once with what to change in the setting that names the database.
 */
const REFUSED_FOR_GOOD: Readonly<Record<string, (setting: string) => string>> = {
  // invalid_password: `password authentication failed for user "app"`, also for a role that does
  // not exist (PostgreSQL does not tell which).
  '28P01': (setting) => `refused the user and password of ${setting}: give ${setting} a role of the database and its password`,
  // invalid_authorization_specification: `role "app" is not permitted to log in`, no pg_hba.conf entry.
  28000: (setting) => `refused the role of ${setting}: let it log in (ALTER ROLE … LOGIN) from this host, or name in ${setting} one that may`,
  // invalid_catalog_name: `database "app" does not exist`.
  '3D000': (setting) => `has no such database: create it (CREATE DATABASE …), or name in ${setting} the database the service uses`
}

/**
 * A connection of its own for start-up, to `url` (DATABASE_URL by default) with `parameters`,
 * retried while `config.DATABASE_STARTUP_TIMEOUT` lasts. A refusal no retry can pass (a pooler
 * that refuses the parameters, a wrong password, a missing role or database) is not retried: the
 * message names the setting and what to change.
 */
export async function connectWithRetries (config: Config, log: Pick<FastifyBaseLogger, 'warn'>, url = config.DATABASE_URL!,
  parameters: Pick<pg.ClientConfig, 'statement_timeout'> = {}): Promise<pg.Client> {
  const deadline = Date.now() + config.DATABASE_STARTUP_TIMEOUT
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(delay * 2, 2000)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: config.DATABASE_STATEMENT_TIMEOUT, ...parameters })
    try {
      await client.connect()
      return client
    } catch (err) {
      const reason = (err as Error).message
      // The reason is in the message, and the driver's error is not its cause: a logged error
      // repeats its cause's message after its own (pino's serializer), which said it twice.
      if (isStartupParameterRefusal(err)) {
        throw new Error(`The database at ${redactedUrl(url)} is behind a pooler that refuses parameters set when connecting (${reason}): set DATABASE_POOLER=transaction`)
      }
      const refused = REFUSED_FOR_GOOD[String((err as { code?: unknown }).code)]
      if (refused !== undefined) {
        const setting = url === config.DATABASE_MIGRATION_URL ? 'DATABASE_MIGRATION_URL' : 'DATABASE_URL'
        throw new Error(`The database at ${redactedUrl(url)} ${refused(setting)} (${reason})`)
      }
      if (Date.now() + delay > deadline) {
        throw new Error(`The database at ${redactedUrl(url)} is unreachable (attempts: ${attempt}): ${reason}`)
      }
      log.warn({ database: redactedUrl(url), attempt, reason }, 'database not reachable yet: retrying')
      await sleep(delay)
    }
  }
}
