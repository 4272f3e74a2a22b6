// Where a request's work goes, in instructions, one request at a time: each request in an
// event-loop turn of its own, as an open-model load below saturation sends them (latency.bench.js),
// where wrk's 50 connections share each turn among many. Under valgrind's callgrind: a count that
// does not depend on how busy the machine is, nor on the hypervisor (bench/README.md), though it
// moves by some 10 % between runs of the same build with what V8 has compiled by then, where CPU
// time per request moves by a factor of two here. Compare two builds over several runs.
//
// The ladder, each rung answering the service's own bytes for the request (captured first):
//   raw        node:http (raw-server.js)
//   Fastify    a bare Fastify app, logger off, the bytes sent from a synchronous handler (fastify-floor.js RUNG=1)
//   floor      Fastify with the route's schema, an async handler and pino at warn (RUNG=3); for the
//              five example endpoints, which it has routes for
//   service    dist/bundle/server.js, production settings, memory store
// Node runs with --single-threaded, so that V8's compilers and GC run on the main thread and are
// counted, then told apart: `compile` (TurboFan and Maglev), `gc` (collections), and `rest`, the
// request's own path, which is the figure to compare. BENCH_INSTRUCTIONS_WARMUP (20,000) requests
// first, so that the hot functions are compiled (fewer leave V8 still compiling, which `compile`
// shows), then BENCH_INSTRUCTIONS_COUNT (3,000) counted. BENCH_INSTRUCTIONS_ONLY='GET /users/1'
// runs one request. Needs Debian's `valgrind`; without it the bench says so and ends.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { USER_REQUESTS, ENDPOINTS, captureRequest, freePort, printTable, root, serverEntry, startService, summarize, waitFor } from './lib.js'

const WARMUP = Number(process.env.BENCH_INSTRUCTIONS_WARMUP ?? 20_000)
const COUNT = Number(process.env.BENCH_INSTRUCTIONS_COUNT ?? 3_000)
const only = process.env.BENCH_INSTRUCTIONS_ONLY
const VALGRIND = ['/usr/bin/valgrind', '/usr/local/bin/valgrind'].find((file) => fs.existsSync(file))

const REQUESTS = [
  ...ENDPOINTS.map(({ path: requestPath, headers }) => ({ name: `GET ${requestPath}`, path: requestPath, headers, floor: true })),
  USER_REQUESTS.one,
  USER_REQUESTS.add
].filter((request) => only === undefined || request.name === only)

/**
 * The instructions callgrind counted while `requests` were sent to `script` (with `env`), one at a
 * time on one keep-alive connection, after the warm-up: in all, and V8's compiles and collections.
 */
async function count (script, env, request) {
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-callgrind-'))
  // vgdb, which callgrind_control talks to the process through, names its pipes after LOGNAME and
  // HOST: the same in both processes.
  const names = { USER: 'bench', LOGNAME: 'bench', HOST: '127.0.0.1' }
  const child = spawn(VALGRIND, ['--tool=callgrind', '--vgdb=yes', `--vgdb-prefix=${dir}/vgdb`, `--callgrind-out-file=${dir}/out`, '--dump-line=no', '--compress-strings=no',
    process.execPath, '--single-threaded', script], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), METRICS_PORT: '0', ...env, ...names },
    stdio: ['ignore', 'ignore', process.env.BENCH_INSTRUCTIONS_DEBUG ? 'inherit' : 'ignore']
  })
  const control = (flag) => execFileSync('callgrind_control', [flag, `--vgdb-prefix=${dir}/vgdb`, String(child.pid)], { env: { ...process.env, ...names }, stdio: process.env.BENCH_INSTRUCTIONS_DEBUG ? 'inherit' : 'ignore' })
  try {
    await waitFor(`http://127.0.0.1:${port}/health`, 300_000)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const send = () => new Promise((resolve, reject) => {
      const headers = { ...request.headers, ...(request.body === undefined ? {} : { 'content-length': Buffer.byteLength(request.body) }) }
      http.request({ host: '127.0.0.1', port, path: request.path, method: request.method ?? 'GET', headers, agent }, (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk) => { if (response.statusCode >= 300) text += chunk })
        response.on('end', () => response.statusCode < 300 ? resolve() : reject(new Error(`${request.name}: ${response.statusCode} ${text}`)))
      }).on('error', reject).end(request.body)
    })
    const debug = (what) => { if (process.env.BENCH_INSTRUCTIONS_DEBUG) console.error(`${request.name} ${path.basename(script)} ${JSON.stringify(env.RUNG ?? '')}: ${what}`) }
    debug('listening')
    for (let i = 0; i < WARMUP; i++) await send()
    debug('warm')
    control('-z')
    for (let i = 0; i < COUNT; i++) await send()
    debug('counted')
    control('-d')
    debug('dumped')
    agent.destroy()
    const dump = fs.readdirSync(dir).find((file) => /^out\.\d+$/.test(file) || /^out\.\d+\.\d+$/.test(file))
    const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', path.join(dir, dump)], { maxBuffer: 1 << 28, encoding: 'utf8' }).split('\n')
    const inclusive = (pattern) => annotated.filter((line) => pattern.test(line)).map((line) => Number(line.trim().split(' ')[0].replaceAll(',', ''))).reduce((max, n) => Math.max(max, n), 0)
    const total = inclusive(/PROGRAM TOTALS/)
    const compile = inclusive(/Runtime_(OptimizeTurbofanEager|CompileOptimized|OptimizeMaglevEager)\b/)
    const gc = inclusive(/Heap::CollectGarbage\(v8::internal::AllocationSpace/)
    return { total: total / COUNT, compile: compile / COUNT, gc: gc / COUNT, rest: (total - compile - gc) / COUNT }
  } finally {
    child.kill('SIGKILL')
    await new Promise((resolve) => child.exitCode !== null ? resolve() : child.once('exit', resolve))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

if (VALGRIND === undefined) {
  console.log('instructions: valgrind is not installed (Debian: apt-get install valgrind); nothing measured')
  process.exit(0)
}

// What the service answers for each request, replayed by the other rungs (one request each: GET
// and POST /users share a path).
const service = await startService()
const replays = new Map()
for (const request of REQUESTS) {
  const answer = await captureRequest(service.url, request)
  if (answer.status >= 300) throw new Error(`${request.name}: the service answers ${answer.status}`)
  replays.set(request, { FIXTURES: Buffer.from(JSON.stringify({ [request.path]: answer })).toString('base64') })
}
await service.stop()

const k = (n) => Math.round(n / 100) / 10
const baseline = process.env.BENCH_INSTRUCTIONS_BASELINE
/** The servers of a request's ladder: name, script and environment. */
function rungsOf (request) {
  const replay = replays.get(request)
  // Under valgrind an interval of the overload guard can pass without one sample of the event
  // loop's delay, which under-pressure takes for an infinite delay: it would answer 503. Its
  // delay check is off, a heap bound that is never reached keeps its hook and sampling running.
  const serviceEnv = { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory', PRESSURE_MAX_EVENT_LOOP_DELAY: '0', PRESSURE_MAX_HEAP_USED_BYTES: String(2 ** 50) }
  return [
    ['raw', path.join(root, 'bench', 'raw-server.js'), replay],
    ...(request.method === undefined ? [['Fastify', path.join(root, 'bench', 'fastify-floor.js'), { ...replay, RUNG: '1' }]] : []),
    ...(request.floor ? [['floor', path.join(root, 'bench', 'fastify-floor.js'), { ...replay, RUNG: '3', LOG_LEVEL: 'warn' }]] : []),
    ['service', serverEntry, serviceEnv],
    ...(baseline === undefined ? [] : [['baseline', path.resolve(baseline), serviceEnv]])
  ]
}

// Every count of every request, two at a time: one a core (a count hardly depends on what else
// runs).
const jobs = REQUESTS.flatMap((request) => rungsOf(request).map((rung) => ({ request, rung })))
const counts = new Map(REQUESTS.map((request) => [request, {}]))
const queue = [...jobs]
await Promise.all([0, 1].map(async () => {
  for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
    const [name, script, env] = job.rung
    counts.get(job.request)[name] = await count(script, env, job.request)
  }
}))

const rows = REQUESTS.map((request) => {
  const counted = counts.get(request)
  const row = { request: request.name }
  for (const [name] of rungsOf(request)) row[`${name} k`] = k(counted[name].rest)
  const { raw, service: own } = counted
  row['service compile+gc k'] = k(own.compile + own.gc)
  row['service / raw'] = Math.round(own.rest / raw.rest * 100) / 100
  if (counted.Fastify) row['Fastify / raw'] = Math.round(counted.Fastify.rest / raw.rest * 100) / 100
  if (counted.floor) row['service / floor'] = Math.round(own.rest / counted.floor.rest * 100) / 100
  if (counted.baseline) row['service / baseline'] = Math.round(own.rest / counted.baseline.rest * 100) / 100
  return row
})
console.log(`\nInstructions per request (thousands, k), one at a time, after ${WARMUP} of warm-up, ${COUNT} counted; \`rest\`: without V8's compiles and collections`)
printTable(rows)
summarize(rows.map((row) => ({ figure: `instructions, one at a time: service / raw, ${row.request}`, ratio: row['service / raw'], target: '', met: '' })))
