import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { PostgresUnavailable, createDatabase, freePort, installedBinaries, startPostgresServer } from '../helpers/postgres-server.js'

/** The directories of this process's servers in the temporary directory. */
function ownDirectories (): string[] {
  return fs.readdirSync(os.tmpdir())
    .filter((name) => name.startsWith('servant-test-pg-'))
    .filter((name) => {
      try {
        return fs.readFileSync(path.join(os.tmpdir(), name, 'owner.pid'), 'utf8') === String(process.pid)
      } catch {
        return false
      }
    })
}

t.test('freePort: never the same port twice, never one the kernel may give an outgoing connection, and a free one', async (t) => {
  const [low = 0, high = 0] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
  const ports: number[] = []
  for (let i = 0; i < 300; i++) ports.push(await freePort())
  t.equal(new Set(ports).size, ports.length, 'all distinct')
  t.ok(ports.every((port) => port < low || port > high), `all outside ${low}-${high}`)
  const server = net.createServer()
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(ports[0], '127.0.0.1', resolve))
  t.ok(server.listening, 'a server can listen on it')
  server.close()
})

t.test('a server that cannot start fails at once, with one line that says why and what to do', async (t) => {
  const failure = (binaries: string) => startPostgresServer({ binaries }).then(() => undefined, (err: Error) => err)
  const script = (text: string) => {
    const dir = t.testdir({ bin: { initdb: text } })
    fs.chmodSync(path.join(dir, 'bin', 'initdb'), 0o755)
    fs.chmodSync(dir, 0o755)
    return dir
  }

  const missing = await failure(t.testdir({}))
  t.type(missing, PostgresUnavailable)
  t.match(missing?.message, /^PostgreSQL for the tests could not start: initdb failed: .*ENOENT.*\. It is missing: run `npm ci`$/)

  const locked = script('#!/bin/sh\n')
  fs.chmodSync(path.join(locked, 'bin', 'initdb'), 0o644)
  t.match((await failure(locked))?.message, /^PostgreSQL for the tests could not start: initdb failed: .*EACCES.*user may not run .*initdb: make it and its directories readable and executable/)

  const refusing = script('#!/bin/sh\necho "initdb: error: the disk is on fire" >&2\nexit 1\n')
  t.equal((await failure(refusing))?.message,
    'PostgreSQL for the tests could not start: initdb failed: initdb: error: the disk is on fire. Its message says why')

  for (const err of [missing, await failure(refusing)]) t.notMatch(err?.message, /\n/, 'one line')
  t.same(ownDirectories(), [], 'nothing left behind')
})

t.test('a server starts, serves, and leaves nothing when stopped; what a killed run left is removed', async (t) => {
  // A run killed with its server: the owner is gone (a pid that has exited), and so is the server.
  const stale = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-test-pg-'))
  fs.writeFileSync(path.join(stale, 'owner.pid'), String(spawnSync('true').pid))

  let binaries = installedBinaries()
  if (process.getuid?.() === 0) {
    // As root the server runs as the postgres user, which cannot enter a directory of mode 700
    // (a clone in /root or in a `mktemp -d`): the binaries there are copied for it.
    const hidden = t.testdir({})
    fs.chmodSync(hidden, 0o700)
    binaries = path.join(hidden, 'native')
    fs.cpSync(installedBinaries(), binaries, { recursive: true, verbatimSymlinks: true })
  }
  const server = await startPostgresServer({ binaries })
  t.notOk(fs.existsSync(stale), 'the directory of a killed run is removed')

  const client = new pg.Client(await createDatabase(server.url))
  await client.connect()
  t.same((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'a database of its own answers')
  await client.end()

  t.equal(ownDirectories().length, 1, 'one directory while it runs')
  await server.stop()
  t.same(ownDirectories(), [], 'none once stopped')
})
