// The user store on memory and on PostgreSQL, same run: GET /users, GET /users/1 and POST /users,
// with one service process and with two (the load split across them, as behind a proxy).
// Requests/s (summed over the processes), p99 latency (the worse process), service CPU per request
// and PostgreSQL's (its server processes), alternating rounds, medians. Then, per request, the
// service's CPU on PostgreSQL against memory with one process (target: ≤ 1.3), and on the memory
// store POST /users against GET /users/1 (target: ≤ 1.3: a write costs little more than a read),
// handed to the summary; then the time from spawn to the first 200 on GET /users, both stores.
// Before any load, both stores must answer the measured requests with the same status, headers and
// body bytes (a faster store that answers otherwise is wrong, not faster): the run fails if not.
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- store`.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { USER_REQUESTS, freePort, load, median, printTable, serverEntry, startDatabase, startService, summarize, waitFor } from './lib.js'

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 5)
const CONNECTIONS = 50
// POST last: it grows the store that GET /users lists.
const REQUESTS = [
  USER_REQUESTS.list,
  USER_REQUESTS.one,
  USER_REQUESTS.add
]

/** The service's CPU per request on PostgreSQL over memory, one process: the target, at most. */
const TARGET = 1.3
/** The memory store's POST /users over its GET /users/1, one process: the target, at most. */
const WRITE_TARGET = 1.3
/** Headers that differ from one answer to the next whatever the store: left out of the comparison. */
const PER_REQUEST_HEADERS = new Set(['date', 'x-request-id', 'connection', 'keep-alive', 'transfer-encoding'])

/** One request on node:http (no decompression, no added headers): status, headers as sent but per-request ones, body bytes. */
function answer (url, { method = 'GET', body, headers = {} }) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => {
        const kept = {}
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i].toLowerCase()
          if (!PER_REQUEST_HEADERS.has(name)) kept[name] = [...(kept[name] ?? []), response.rawHeaders[i + 1]]
        }
        resolve({ status: response.statusCode, headers: kept, body: Buffer.concat(chunks) })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(body)
  })
}

/**
 * The measured requests (and a POST that asks for the representation) on both stores, fresh, in
 * the same order: each answer must be the same, byte for byte but for per-request headers. The
 * POSTs come last and add the same items to both, which the lists measured after then hold alike.
 */
async function sameAnswers (memory, postgres) {
  const checks = [
    ...REQUESTS,
    { ...REQUESTS.at(-1), name: 'POST /users, Prefer: return=representation', headers: { ...REQUESTS.at(-1).headers, prefer: 'return=representation' } }
  ]
  const differences = []
  for (const check of checks) {
    const [expected, actual] = [await answer(memory.url + check.path, check), await answer(postgres.url + check.path, check)]
    if (expected.status !== actual.status) differences.push(`${check.name}: status ${expected.status} on memory, ${actual.status} on PostgreSQL`)
    for (const name of new Set([...Object.keys(expected.headers), ...Object.keys(actual.headers)])) {
      const [a, b] = [JSON.stringify(expected.headers[name]), JSON.stringify(actual.headers[name])]
      if (a !== b) differences.push(`${check.name}: header ${name} ${a} on memory, ${b} on PostgreSQL`)
    }
    if (!expected.body.equals(actual.body)) {
      differences.push(`${check.name}: body ${JSON.stringify(expected.body.toString('latin1'))} on memory, ${JSON.stringify(actual.body.toString('latin1'))} on PostgreSQL`)
    }
  }
  if (differences.length > 0) throw new Error(`the stores answer differently:\n  ${differences.join('\n  ')}`)
  console.log(`memory and PostgreSQL answer alike (status, headers, body bytes): ${checks.map((check) => check.name).join('; ')}`)
}

/** One round of `request` on a setup: every process loaded at once, the connections split. */
async function round (processes, { path, method, body, headers }) {
  const databaseBefore = database.cpuMicros()
  const before = processes.map((server) => server.cpuMicros())
  const runs = await Promise.all(processes.map((server) => load(server.url + path, {
    method, body, headers, duration, connections: CONNECTIONS / processes.length
  })))
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  const cpu = processes.reduce((sum, server, index) => sum + server.cpuMicros() - before[index], 0)
  return {
    rps: runs.reduce((sum, run) => sum + run.rps, 0),
    p99: Math.max(...runs.map((run) => run.p99)),
    cpuMicros: cpu / requests,
    databaseMicros: (database.cpuMicros() - databaseBefore) / requests
  }
}

/** Milliseconds from spawning the service to its first 200 on GET /users. */
async function timeToFirst200 (env) {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [serverEntry], { env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' })
  await waitFor(`http://127.0.0.1:${port}/users`)
  const elapsed = performance.now() - started
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  return elapsed
}

const database = await startDatabase()
const setups = []
try {
  const url = await database.createDatabase('bench')
  for (const [store, env] of [['memory', {}], ['PostgreSQL', { STORE: 'postgres', DATABASE_URL: url }]]) {
    const first = await startService(env)
    const second = await startService(env)
    setups.push({ store, count: 1, processes: [first] }, { store, count: 2, processes: [first, second] })
  }
  await sameAnswers(setups[0].processes[0], setups[2].processes[0])
  const rows = []
  for (const request of REQUESTS) {
    for (const { processes } of setups) await round(processes, { ...request, duration: 1 })
    const results = setups.map(() => [])
    for (let i = 0; i < rounds; i++) {
      for (const [index, setup] of setups.entries()) results[index].push(await round(setup.processes, request))
    }
    for (const [index, { store, count }] of setups.entries()) {
      const runs = results[index]
      rows.push({
        request: request.name,
        store,
        processes: count,
        'req/s': Math.round(median(runs.map((run) => run.rps))),
        'p99 ms': median(runs.map((run) => run.p99)),
        'µs CPU/req (service)': Number(median(runs.map((run) => run.cpuMicros)).toFixed(1)),
        'µs CPU/req (PostgreSQL)': store === 'memory' ? '' : Number(median(runs.map((run) => run.databaseMicros)).toFixed(1))
      })
    }
  }
  console.log(`${rounds} round(s) of ${duration} s per setup and request, ${CONNECTIONS} connections, medians`)
  printTable(rows)

  // The service's CPU per request, PostgreSQL over memory, one process each (the same run).
  const ratios = REQUESTS.map(({ name }) => {
    const [memory, postgres] = ['memory', 'PostgreSQL'].map((store) => rows.find((row) => row.request === name && row.store === store && row.processes === 1)['µs CPU/req (service)'])
    const ratio = Number((postgres / memory).toFixed(2))
    return { request: name, 'µs CPU/req memory': memory, 'µs CPU/req PostgreSQL': postgres, 'PostgreSQL / memory': ratio, target: `≤ ${TARGET}`, met: ratio <= TARGET ? 'yes' : 'NO' }
  })
  console.log('Service CPU per request, PostgreSQL over memory, one process:')
  printTable(ratios)
  summarize(ratios.map((row) => ({ figure: `${row.request}: PostgreSQL / memory store`, ratio: row['PostgreSQL / memory'], target: row.target, met: row.met })))
  const [read, write] = ['GET /users/1', 'POST /users'].map((name) => ratios.find((row) => row.request === name)['µs CPU/req memory'])
  const writeOverRead = Number((write / read).toFixed(2))
  console.log(`Memory store, one process: POST /users ${write} µs against GET /users/1 ${read} µs of CPU per request, ${writeOverRead} (target ≤ ${WRITE_TARGET})`)
  summarize([{ figure: 'memory store: POST /users / GET /users/1', ratio: writeOverRead, target: `≤ ${WRITE_TARGET}`, met: writeOverRead <= WRITE_TARGET ? 'yes' : 'NO' }])

  for (const setup of setups) if (setup.count === 2) for (const server of setup.processes) await server.stop()
  setups.length = 0
  const cold = { memory: [], PostgreSQL: [] }
  const coldUrl = await database.createDatabase('cold')
  for (let i = 0; i < 5; i++) {
    cold.memory.push(await timeToFirst200({}))
    cold.PostgreSQL.push(await timeToFirst200({ STORE: 'postgres', DATABASE_URL: coldUrl }))
  }
  for (const [store, runs] of Object.entries(cold)) {
    console.log(`spawn to first 200 on GET /users, ${store}: median ${median(runs).toFixed(0)} ms (runs: ${runs.map((ms) => ms.toFixed(0)).join(', ')})`)
  }
} finally {
  for (const setup of setups) if (setup.count === 2) for (const server of setup.processes) await server.stop()
  await database.stop()
}
