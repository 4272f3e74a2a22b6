// Shared pieces of the benchmarks: servers in child processes, autocannon runs, medians.
// Benchmarks measure the built service (dist/), as `npm start` runs it. They are not tests.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { createDatabase, freePort, startPostgresServer } from '../test/helpers/postgres-server.ts'

export const root = path.resolve(import.meta.dirname, '..')
/** Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100
export const serverEntry = path.join(root, 'dist', 'bundle', 'server.js')

/** The example endpoints measured per request (the table), and the memory bench's load. */
export const ENDPOINTS = [
  { path: '/hello?name=x' },
  { path: '/users' },
  { path: '/position/1/2' },
  { path: '/persons' },
  { path: '/colors', headers: { range: 'name; limit 10' } }
]

/** The user requests the benches measure: the list, one user, and a POST of a valid user (measure it last: it grows the list). */
export const USER_REQUESTS = {
  list: { name: 'GET /users', path: '/users' },
  one: { name: 'GET /users/1', path: '/users/1' },
  add: {
    name: 'POST /users',
    path: '/users',
    method: 'POST',
    body: JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }),
    headers: { 'content-type': 'application/json' }
  }
}

export function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export { freePort }

/** Resolves once GET url answers 200. */
export async function waitFor (url, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return
    } catch {}
    await sleep(5)
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
}

/** The line the service writes once stdout has room again after it dropped lines (lib/log-destination.ts). */
const DROPPED_NOTICE = /"dropped":(\d+),"msg":"\d+ log lines dropped/g

/**
 * A pipe for a child's stdout: both ends of a FIFO made (with coreutils' `mkfifo`, Node has no
 * `pipe()`) in a temporary directory and removed at once. The reading end does not block, so that
 * it opens before the writing end and this process reads it as it reads a socket.
 */
function logPipe () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stdout-'))
  const fifo = path.join(dir, 'stdout')
  try {
    execFileSync('mkfifo', ['-m', '600', fifo])
    const readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const writeFd = fs.openSync(fifo, fs.constants.O_WRONLY)
    return { readFd, writeFd }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A Node process (`args` after node itself) on a free loopback port (PORT, HOST), ready once
 * `healthPath` answers 200; killed if it does not within `timeoutMs`. With `readStdout`, its stdout
 * is read by this process as a log collector reads it, counting the lines, the bytes and the lines
 * the service says it dropped (`logged`); otherwise it goes nowhere. `readStdout: true` (or
 * `'pipe'`) makes stdout a pipe, as Docker's and containerd's log collectors do (a FIFO each
 * stream); `'socket'`, the socket pair Node's `spawn` makes for `'pipe'`, what the logging bench
 * read before, which cost the service the same or a little more (bench/README.md, Logging).
 */
export function startProcess (args, env, healthPath, timeoutMs = 15_000, { readStdout = false } = {}) {
  return freePort().then(async (port) => {
    const reader = readStdout === false ? undefined : readStdout === 'socket' ? 'socket' : logPipe()
    const child = spawn(process.execPath, args, {
      // A ceiling of items that no bench reaches (they POST hundreds of thousands of users): each
      // POST still checks it, as in production, and none is refused.
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', COLLECTION_MAX_ITEMS: '1000000000', ...env },
      stdio: ['ignore', reader === undefined ? 'ignore' : reader === 'socket' ? 'pipe' : reader.writeFd, 'inherit']
    })
    let stdout = child.stdout
    if (reader !== undefined && reader !== 'socket') {
      // The child holds the writing end now: closed here, the pipe ends (EOF) when the child does.
      fs.closeSync(reader.writeFd)
      stdout = new net.Socket({ fd: reader.readFd, readable: true, writable: false })
    }
    const logged = { lines: 0, bytes: 0, dropped: 0 }
    // The end of the chunk before, where a notice of dropped lines may have begun.
    let tail = ''
    stdout?.on('data', (chunk) => {
      logged.bytes += chunk.length
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) logged.lines++
      // The service's notice of the lines it dropped for want of room (lib/log-destination.ts),
      // counted once; a chunk is decoded only when it holds one, or the end of one begun before.
      const head = chunk.subarray(0, 200).toString('latin1')
      if (chunk.includes('log lines dropped') || (tail + head).includes('log lines dropped')) {
        const text = tail + chunk.toString('latin1')
        for (const match of text.matchAll(DROPPED_NOTICE)) if (match.index + match[0].length > tail.length) logged.dropped += Number(match[1])
      }
      tail = chunk.subarray(-200).toString('latin1')
    })
    const url = `http://127.0.0.1:${port}`
    try {
      await waitFor(url + healthPath, timeoutMs)
    } catch (err) {
      child.kill('SIGKILL')
      throw err
    }
    return {
      url,
      pid: child.pid,
      /** What the process wrote to stdout so far, with `readStdout`: lines and bytes. */
      logged: () => ({ ...logged }),
      /** CPU time (user + system) the process has used so far, in microseconds (Linux). */
      cpuMicros () {
        const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ')
        return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
      },
      /** Peak resident set size of the process so far, in MB (Linux). */
      peakRssMb () {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8')
        return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024
      },
      /** Resident set size of the process now, in MB (Linux). */
      rssMb () {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8')
        return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024
      },
      async stop () {
        child.kill('SIGTERM')
        await new Promise((resolve) => child.once('exit', resolve))
      }
    }
  })
}

/**
 * The service from dist/, request logging off so that both sides of a pair do the same work
 * (`LOG_LEVEL: undefined` in `env` runs it at the production default). `readStdout`: see startProcess.
 */
export function startService (env = {}, { timeoutMs = 60_000, readStdout = false } = {}) {
  return startProcess([serverEntry], { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory', ...env }, '/health', timeoutMs, { readStdout })
}

/** The service without its production plugins (see service-without-edge.js), set as startService. */
export function startServiceWithoutEdge (env = {}) {
  return startProcess([path.join(root, 'bench', 'service-without-edge.js')], { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory', ...env }, '/health')
}

/** The service with `count` generated colours on GET /colors, or the 59 with 0 (see service-with-colors.js), set as startService. */
export function startServiceWithColors (count, env = {}, { timeoutMs = 60_000 } = {}) {
  return startProcess([path.join(root, 'bench', 'service-with-colors.js')], { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory', BENCH_COLORS: String(count), ...env }, '/health', timeoutMs)
}

/** A server of bench/ (`script`) answering each path of `fixtures` with the same bytes (FIXTURES). */
export function startReplay (script, fixtures, env = {}) {
  const encoded = Buffer.from(JSON.stringify(fixtures)).toString('base64')
  return startProcess([path.join(root, 'bench', script)], { FIXTURES: encoded, ...env }, '/health', 15_000)
}

/** A plain node:http server answering each path with fixed bytes (see raw-server.js). */
export function startRaw (fixtures) {
  return startReplay('raw-server.js', fixtures)
}

/** A bare Fastify app answering the same bytes (see fastify-floor.js): the framework's own cost. */
export function startFastifyFloor (fixtures, env = {}) {
  return startReplay('fastify-floor.js', fixtures, { LOG_LEVEL: 'warn', ...env })
}

/** What the service answers for a path: status, headers worth repeating, and the exact body bytes. */
export async function capture (baseUrl, requestPath, headers = {}) {
  const res = await fetch(baseUrl + requestPath, { headers })
  const kept = {}
  for (const [name, value] of res.headers) {
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = value
  }
  return { status: res.status, headers: kept, body: Buffer.from(await res.arrayBuffer()).toString('base64') }
}

/**
 * What a server answers for a request, on node:http (no Accept-Encoding: the load generators send none,
 * so the replayed bytes are those the service sends them): status, headers worth repeating, body.
 */
export function captureRequest (url, { path: requestPath, method = 'GET', headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const request = http.request(url + requestPath, { method, headers, agent: false }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => {
        const kept = {}
        for (const [name, value] of Object.entries(response.headers)) {
          if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = value
        }
        resolve({ status: response.statusCode, headers: kept, body: Buffer.concat(chunks).toString('base64') })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** What the service at `baseUrl` answers for each of ENDPOINTS, by path: the bytes the baselines replay. */
export async function captureEndpoints (baseUrl) {
  const fixtures = {}
  for (const { path: endpoint, headers } of ENDPOINTS) {
    const answer = await capture(baseUrl, endpoint, headers)
    if (answer.status >= 300) throw new Error(`${endpoint}: the service answers ${answer.status}`)
    fixtures[endpoint] = answer
  }
  return fixtures
}

/** wrk (Debian's `wrk`), when the machine has it: a load generator in C, one thread. */
const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((file) => fs.existsSync(file))
export const generator = WRK === undefined ? 'autocannon (install wrk for steadier figures)' : 'wrk -t1'

/** One wrk run (-t1: one thread, as light on the shared cores as a generator can be). */
async function wrk (url, { method, body, headers, duration, connections }) {
  const script = path.join(os.tmpdir(), `bench-${process.pid}.lua`)
  fs.writeFileSync(script, [
    `wrk.method = ${JSON.stringify(method)}`,
    body === undefined ? '' : `wrk.body = ${JSON.stringify(body)}`,
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
  ].join('\n'))
  const run = spawn(WRK, ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  run.stdout.on('data', (chunk) => { out += chunk })
  await new Promise((resolve) => run.once('exit', resolve))
  fs.rmSync(script, { force: true })
  const number = (pattern) => Number(pattern.exec(out)?.[1])
  const millis = (label) => {
    const [, value, unit] = new RegExp(`${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out) ?? []
    return Number(value) * { us: 0.001, ms: 1, s: 1000 }[unit]
  }
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  return {
    requests: number(/(\d+) requests in/),
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: millis('50'),
    p99: millis('99'),
    errors: socket === null ? 0 : socket.slice(1).reduce((sum, count) => sum + Number(count), 0),
    // wrk counts the answers that are neither 2xx nor 3xx.
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/) || 0
  }
}

/** One load run: requests/s, latency percentiles (ms) and throughput (bytes/s). wrk if there is one. */
export async function load (url, { method = 'GET', body, headers = {}, duration = 5, connections = 50 } = {}, retried = false) {
  const result = WRK === undefined
    ? await autocannonRun(url, { method, body, headers, duration, connections })
    : await wrk(url, { method, body, headers, duration, connections })
  // Socket errors alone (every connection timing out at once, 2 s for wrk) happened on a machine
  // loaded by other work: the round is run again, once, and says so. A wrong answer is never retried.
  if (!retried && result.errors > 0 && result.non2xx === 0) {
    console.error(`${url}: ${result.errors} socket errors in a round; running it again`)
    return load(url, { method, body, headers, duration, connections }, true)
  }
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  return result
}

async function autocannonRun (url, { method, body, headers, duration, connections }) {
  const result = await autocannon({ url, method, body, headers, duration, connections })
  return {
    errors: result.errors,
    non2xx: result.non2xx,
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bytesPerSec: result.throughput.average
  }
}

/**
 * The same request against several servers (from startService, startRaw…), in alternating rounds
 * so that all see the same machine. For each, in the order given: the median requests/s, and the
 * median server CPU time per request in µs, which the load generator sharing the machine disturbs
 * far less than throughput, with each round's (`cpuRounds`); and how many requests it was sent in
 * all, warm-up included. `method` and `body` as `load` takes them.
 */
export async function compare (servers, requestPath, { headers = {}, rounds = 5, duration = 5, method, body } = {}) {
  const sent = servers.map(() => 0)
  for (const [index, { url }] of servers.entries()) sent[index] += (await load(url + requestPath, { method, body, headers, duration: 1 })).requests
  const rps = servers.map(() => [])
  const cpu = servers.map(() => [])
  for (let i = 0; i < rounds; i++) {
    for (const [index, server] of servers.entries()) {
      const before = server.cpuMicros()
      const run = await load(server.url + requestPath, { method, body, headers, duration })
      rps[index].push(run.rps)
      cpu[index].push((server.cpuMicros() - before) / run.requests)
      sent[index] += run.requests
    }
  }
  return servers.map((_, index) => ({ rps: median(rps[index]), cpuMicros: median(cpu[index]), cpuRounds: cpu[index], requests: sent[index] }))
}

/**
 * A PostgreSQL server of the benchmark's own, the tests' (test/helpers/postgres-server.ts, which
 * Node runs as it is), in a temporary directory removed when it stops. `createDatabase(name)`
 * gives the URL of a new database.
 */
/**
 * A process's CPU time (utime + stime), and its ended children's (cutime + cstime), in
 * microseconds, and its parent's pid (Linux); undefined once it is gone.
 */
function processTimes (pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    const micros = (index) => Number(fields[index]) * 1e6 / CLOCK_TICKS
    return { ppid: Number(fields[1]), micros: micros(11) + micros(12), endedChildren: micros(13) + micros(14) }
  } catch {
    return undefined
  }
}

export async function startDatabase () {
  const server = await startPostgresServer()
  // The postmaster: the process listening with `-p <port>`; its children are the backends.
  const postmaster = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).find((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(` -p ${server.port} `)
    } catch {
      return false
    }
  })
  return {
    createDatabase: (name) => createDatabase(server.url, name),
    /**
     * CPU time (user + system) the server has used so far, in microseconds: the postmaster, the
     * processes it runs now, and those that ended (a backend's time moves to the postmaster's
     * children's when its connection closes).
     */
    cpuMicros () {
      if (postmaster === undefined) return NaN
      const own = processTimes(postmaster)
      let total = (own?.micros ?? 0) + (own?.endedChildren ?? 0)
      for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
        const times = processTimes(pid)
        if (times?.ppid === Number(postmaster)) total += times.micros
      }
      return total
    },
    /** The server's processes now: the postmaster and its children (backends, background workers). */
    pids () {
      if (postmaster === undefined) return []
      const children = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => processTimes(pid)?.ppid === Number(postmaster))
      return [Number(postmaster), ...children.map(Number)]
    },
    stop: () => server.stop()
  }
}

export function printTable (rows) {
  console.table(rows)
}

/**
 * Hands rows of ratios to the summary `npm run bench` prints at its end, one table per Node it ran
 * on (bench/index.js sets BENCH_SUMMARY, a file the benchmarks append to). Each row: `figure`
 * (what is compared), `ratio`, `target` (e.g. '≤ 1.15', or '' for none) and `met` ('yes', 'NO', '').
 */
export function summarize (rows) {
  const file = process.env.BENCH_SUMMARY
  if (file === undefined) return
  for (const row of rows) fs.appendFileSync(file, JSON.stringify(row) + '\n')
}
