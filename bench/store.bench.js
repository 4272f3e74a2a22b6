// The user store on memory and on PostgreSQL, same run: GET /users, GET /users/1 and POST /users,
// with one service process and with two (the load split across them, as behind a proxy).
// Requests/s (summed over the processes), p99 latency (the worse process), service CPU per request
// and PostgreSQL's (its server processes), alternating rounds, medians. Then the time from spawn to the first 200 on GET /users, both stores.
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- store`.
import { spawn } from 'node:child_process'
import { freePort, load, median, printTable, serverEntry, startDatabase, startService, waitFor } from './lib.js'

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 5)
const CONNECTIONS = 50
const ADA = JSON.stringify({ name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' })
// POST last: it grows the store that GET /users lists.
const REQUESTS = [
  { name: 'GET /users', path: '/users' },
  { name: 'GET /users/1', path: '/users/1' },
  { name: 'POST /users', path: '/users', method: 'POST', body: ADA, headers: { 'content-type': 'application/json' } }
]

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
