import net from 'node:net'
import pg from 'pg'
import tap, { type Test } from 'tap'
import { PASSWORD, USER, createDatabase, startPostgresServer, type PostgresServer } from './postgres-server.js'
import { TEMPLATE, createTemplate } from './postgres-template.js'

export interface TestPostgres {
  /** The server's port on the loopback. */
  port: number
  /** A new, empty database on the server; its connection URL. */
  createDatabase: () => Promise<string>
  /** A new database on the server with the service's migrations applied (a copy of the template); its URL. */
  migratedDatabase: () => Promise<string>
}

let own: Promise<PostgresServer> | undefined

/**
 * The PostgreSQL server of this test run: the one `npm test` started (TEST_POSTGRES_URL, with the
 * template made), or else one of this process's own, started on first use and stopped when the
 * process's tests end.
 */
export async function testPostgres (): Promise<TestPostgres> {
  const shared = process.env.TEST_POSTGRES_URL
  if (shared !== undefined && shared !== '') return onServer(shared)
  if (own === undefined) {
    own = startPostgresServer().then(async (server) => {
      await createTemplate(server.url)
      return server
    })
    const started = own
    tap.teardown(async () => (await started).stop())
  }
  return onServer((await own).url)
}

function onServer (url: string): TestPostgres {
  return {
    port: Number(new URL(url).port),
    createDatabase: () => createDatabase(url),
    migratedDatabase: () => createDatabase(url, undefined, TEMPLATE)
  }
}

/** A new database on the test run's server with the service's migrations applied; its URL. */
export async function migratedDatabase (): Promise<string> {
  return (await testPostgres()).migratedDatabase()
}

let roles = 0

/**
 * `database` (a URL of createDatabase) as a new role that may log in and nothing more, as a
 * service's own role may: no CREATE on schema public, which PostgreSQL 15 and later leave to the
 * database's owner. The role is dropped when `t` ends.
 */
export async function unprivilegedUrl (t: Test, database: string): Promise<string> {
  const role = `app_${process.pid}_${++roles}`
  const admin = new pg.Client(database)
  await admin.connect()
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-password'`)
  } finally {
    await admin.end()
  }
  t.teardown(async () => {
    const dropping = new pg.Client(database)
    await dropping.connect()
    try {
      // The privileges a test granted it on `database` first.
      await dropping.query(`DROP OWNED BY ${role}`)
      await dropping.query(`DROP ROLE ${role}`)
    } finally {
      await dropping.end()
    }
  })
  const url = new URL(database)
  url.username = role
  url.password = 'app-password'
  return url.toString()
}

/** A pool on `url`, ended with the test `t`. */
export function testPool (t: Test, url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 20, ...options })
  // Idle connections end with an error when the server stops at the end of the test.
  pool.on('error', () => {})
  t.teardown(() => pool.end())
  return pool
}

export interface TcpProxy {
  port: number
  /** Resolves when a connection is held silent by `blackhole()`: a client is waiting on it. */
  held: () => Promise<void>
  /** Stops forwarding: open connections go silent, new ones are accepted and never answered. */
  blackhole: () => void
  /**
   * A server that stopped, as its clients see it: the database's sessions are ended by the
   * server (each client gets its "terminating connection" error), new connections are refused.
   */
  stopped: () => Promise<void>
  /** Forwards again; the connections held silent are closed. */
  restore: () => void
}

/**
 * A TCP proxy on the loopback to the test server at `targetPort`: a database that can be made to
 * hang or to go away, without touching the server that other tests share.
 */
export async function tcpProxy (t: Test, targetPort: number): Promise<TcpProxy> {
  let mode: 'forward' | 'silent' | 'refuse' = 'forward'
  const sockets = new Set<net.Socket>()
  let onHeld: (() => void) | undefined
  const server = net.createServer((client) => {
    if (mode === 'refuse') {
      client.resetAndDestroy()
      return
    }
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    if (mode === 'silent') {
      onHeld?.()
      return
    }
    // No Nagle's delay on either side: a small write is forwarded at once, as a direct connection sends it.
    client.setNoDelay(true)
    const upstream = net.connect(targetPort, '127.0.0.1').setNoDelay(true)
    sockets.add(upstream)
    upstream.on('close', () => { sockets.delete(upstream); client.destroy() })
    upstream.on('error', () => {})
    client.on('close', () => upstream.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  const port = (server.address() as net.AddressInfo).port
  return {
    port,
    held: () => new Promise<void>((resolve) => { onHeld = resolve }),
    blackhole () {
      mode = 'silent'
      for (const socket of sockets) socket.unpipe()
    },
    async stopped () {
      mode = 'refuse'
      // The sessions that came through this proxy, ended by the server as a shutdown ends them.
      const admin = new pg.Client({ host: '127.0.0.1', port: targetPort, user: USER, password: PASSWORD, database: 'postgres' })
      await admin.connect()
      try {
        const upstreams = [...sockets].filter((socket) => socket.remotePort === targetPort)
        // Not events.once: a socket that errors (a write meeting the reset) must not reject this.
        const closed = upstreams.map((socket) => new Promise((resolve) => socket.once('close', resolve)))
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1::int[])',
          [upstreams.map((socket) => socket.localPort)])
        // Each session's error reaches its client before the connection closes (a hang is bounded).
        await Promise.race([Promise.all(closed), new Promise((resolve) => setTimeout(resolve, 10_000).unref())])
      } finally {
        await admin.end()
      }
      for (const socket of sockets) socket.destroy()
    },
    restore () {
      mode = 'forward'
      for (const socket of sockets) socket.destroy()
    }
  }
}
