// The production entry behind Debian's pgbouncer without DATABASE_POOLER=transaction: it used to
// start, then answer 503 to every request that needs the store, its only trace a warn line per
// request (`unsupported startup parameter: statement_timeout`). Now the start stops, saying which
// setting fixes it. In the system tier (`npm run test:system`; `npm run check:pgbouncer` runs
// test/system/pgbouncer/ alone); without pgbouncer the test fails, naming it.
// lib/postgres/connect.ts's recognition of the refusal is tested in npm test too.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import pg from 'pg'
import t from 'tap'
import { serverEntry, startServer } from '../../helpers/index.js'
import { testPgBouncer } from '../../helpers/pgbouncer.js'
import { migratedDatabase, testPostgres } from '../../helpers/postgres.js'

/**
 * The production entry run to its end with `env`: its exit code and log lines. One that still
 * runs after 20 s (it started: the failure this file is about) is killed, exit code null.
 */
async function run (env: Record<string, string>): Promise<{ status: number | null, logs: Array<Record<string, any>> }> {
  const child = spawn(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  setTimeout(() => child.kill('SIGKILL'), 20_000).unref()
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const [status] = await once(child, 'exit') as [number | null]
  return { status, logs: stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)) }
}

/** A database's URL through the run's pgbouncer. */
async function pooled (direct: string): Promise<string> {
  return (await testPgBouncer()).url(new URL(direct).pathname.slice(1))
}

t.test('behind pgbouncer without DATABASE_POOLER=transaction, the start stops at once, naming the setting that fixes it', async (t) => {
  const fresh = await (await testPostgres()).createDatabase()
  const migrated = await migratedDatabase()
  const cases: Array<[string, Record<string, string>, string]> = [
    ['migrating at start, through the pooler', { DATABASE_URL: await pooled(fresh) }, fresh],
    // The documented split: the migrations straight to PostgreSQL, the service through the pooler.
    ['migrating at start with DATABASE_MIGRATION_URL straight to PostgreSQL', { DATABASE_URL: await pooled(fresh), DATABASE_MIGRATION_URL: fresh }, fresh],
    ['MIGRATE_ON_START=false', { DATABASE_URL: await pooled(migrated), MIGRATE_ON_START: 'false' }, migrated]
  ]
  for (const [name, env, direct] of cases) {
    const { status, logs } = await run({ ...env, DATABASE_STARTUP_TIMEOUT: '30000' })
    t.equal(status, 1, `${name}: exit 1`)
    const shown = env.DATABASE_URL!.replace(/:[^:@/]+@/, ':***@')
    t.equal(logs.find((entry) => entry.level === 60)?.msg,
      `could not start: The database at ${shown} is behind a pooler that refuses parameters set when connecting (unsupported startup parameter: statement_timeout): set DATABASE_POOLER=transaction`,
      `${name}: one line says what to set`)
    t.same(logs.filter((entry) => entry.msg === 'database not reachable yet: retrying'), [], `${name}: not retried as an outage`)
    if (direct !== fresh) continue
    const client = new pg.Client(direct)
    await client.connect()
    const { rows } = await client.query('SELECT to_regclass(\'schemaversion\') IS NULL AS untouched')
    await client.end()
    t.same(rows, [{ untouched: true }], `${name}: nothing migrated by a service that could not have served`)
  }

  // With the setting it names, the same start serves.
  const server = await startServer(t, { DATABASE_URL: await pooled(fresh), DATABASE_POOLER: 'transaction' })
  t.equal((await fetch(`${server.url}/users/1`)).status, 200, 'DATABASE_POOLER=transaction: it starts and serves')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
