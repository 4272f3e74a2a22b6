import pg from 'pg'
import { migrate } from '../../lib/postgres/migrations.js'
import { createDatabase } from './postgres-server.js'

// No tap here: test/helpers/run.ts makes the template before any test runs.

/** The migrated database every test database that needs the schema is copied from. */
export const TEMPLATE = 'test_template'

/**
 * Makes the template on the server of `serverUrl`: a database with the service's migrations
 * applied, once a test run, so that a test database with the schema is a copy (CREATE DATABASE …
 * TEMPLATE) rather than every migration again. No connection to it stays open, which would
 * stop the copies.
 */
export async function createTemplate (serverUrl: string): Promise<void> {
  const client = new pg.Client(await createDatabase(serverUrl, TEMPLATE))
  await client.connect()
  try {
    await migrate(client, { info () {} })
  } finally {
    await client.end()
  }
}
