import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import tap from 'tap'
import { PASSWORD, USER, freePort, serverAccount } from './postgres-server.js'
import { testPostgres } from './postgres.js'

/**
 * Debian's pgbouncer (`apt-get install pgbouncer`; .ci/run installs it), or undefined when it is not
 * installed. Only test/system/pgbouncer/ (in `npm run test:system`, or `npm run check:pgbouncer`) needs it.
 */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) => fs.existsSync(file))

export interface PgBouncer {
  port: number
  /** The URL of `database` through the pooler. */
  url: (database: string) => string
  /** The pooler's own console (SHOW POOLS...), as the user that runs it. */
  adminUrl: string
  stop: () => Promise<void>
}

/**
 * Starts pgbouncer in transaction pooling mode in front of the PostgreSQL server on `serverPort`:
 * every database of the server through one port, `poolSize` server connections per database, so
 * that clients (the service's pool) are many more than server connections and a transaction, not
 * a session, is what a client holds. As root it runs as the server's user (pgbouncer refuses root).
 */
export async function startPgBouncer (serverPort: number, { poolSize = 4 } = {}): Promise<PgBouncer> {
  if (PGBOUNCER === undefined) throw new Error('pgbouncer is not installed: apt-get install pgbouncer')
  const account = serverAccount()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-test-pgbouncer-'))
  fs.chmodSync(dir, 0o755)
  if (account !== undefined) fs.chownSync(dir, account.uid, account.gid)
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const ini = path.join(dir, 'pgbouncer.ini')
    fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${USER}" "${PASSWORD}"\n`)
    fs.writeFileSync(ini, [
      '[databases]',
      `* = host=127.0.0.1 port=${serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // Loopback only; the server side logs in with the password of userlist.txt.
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      `admin_users = ${USER}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 1000',
      ''
    ].join('\n'))
    const child = spawn(PGBOUNCER, [ini], { ...account, stdio: ['ignore', 'ignore', 'pipe'] })
    let said = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { said = (said + chunk).slice(-4096) })
    const exited = once(child, 'exit')
    const up = (async () => {
      while (!said.includes('process up')) await new Promise((resolve) => setTimeout(resolve, 20))
    })()
    const outcome = await Promise.race([up.then(() => 'up'), exited.then(() => 'exited')])
    if (outcome === 'up') {
      child.stderr!.resume()
      return {
        port,
        url: (database) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
        adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/pgbouncer`,
        async stop () {
          if (child.exitCode === null && child.signalCode === null) {
            const gone = once(child, 'exit')
            child.kill('SIGINT')
            await gone
          }
          remove()
        }
      }
    }
    if (attempt < 3 && /Address already in use/.test(said)) continue
    remove()
    throw new Error(`pgbouncer exited: ${said.trim().split('\n').at(-1) ?? 'no message'}`)
  }
}

let own: Promise<PgBouncer> | undefined

/** This test process's pgbouncer, in front of the run's PostgreSQL server; stopped when its tests end. */
export async function testPgBouncer (): Promise<PgBouncer> {
  if (own === undefined) {
    const server = await testPostgres()
    own = startPgBouncer(server.port)
    const started = own
    tap.teardown(async () => (await started).stop())
  }
  return own
}

/** A new database on the run's PostgreSQL server, and its URL through this process's pgbouncer. */
export async function pooledDatabase (): Promise<string> {
  const direct = await (await testPostgres()).createDatabase()
  const bouncer = await testPgBouncer()
  return bouncer.url(new URL(direct).pathname.slice(1))
}
