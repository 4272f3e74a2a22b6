// Memory: the resident set size (RSS) of the production entry, dist/bundle/server.js, with the V8
// heap options the Kubernetes pods get (NODE_OPTIONS of the Deployment's api container, read from
// deploy/kubernetes/base/deployment.yaml: V8 would otherwise size its heap from this machine's
// memory, not from the pod's limit). On each store, one service process:
//   1. 2 s after start, idle once V8's memory reducer has run (30 s: it gives back the young
//      generation that start-up grew), and after BENCH_MEMORY_SECONDS (60) of mixed load (the
//      endpoints of endpoints.bench.js in turn, 50 connections). On the memory store, a bare Fastify
//      app answering the same bytes, with the same options, alongside.
//   2. Long lists: LIST_USERS users (GET /users is then some 31 MB of JSON), and twenty clients
//      reading the list at once, BENCH_LIST_SECONDS (30) a round: as fast as they read, then
//      slowly (256 KiB/s each) without compression, with gzip and with Brotli. A client whose list
//      ends asks again; at the round's end each goes away.
// The peak is VmHWM, the process's highest RSS over all of it. Beside it, the kernel's TCP buffers
// during the rounds (/proc/net/sockstat, both ends of every connection on this machine): a pod's
// memory cgroup counts its sockets' share, which slow clients fill. On PostgreSQL (embedded, as the
// tests'), with DATABASE_POOL_SIZE 22 so that the twenty lists stream at once (each holds a
// connection; the pods' pool of 5 would let three stream and the others wait).
// Writes bench/measured/memory-peak.json, which test/system/deploy/kubernetes.test.ts holds the
// Deployment's memory request and limit to. BENCH_NODE_OPTIONS="…" runs with other options
// (BENCH_NODE_OPTIONS= for V8's own sizing) and records nothing.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import YAML from 'yaml'
import { ENDPOINTS, captureEndpoints, load, printTable, root, serverEntry, startDatabase, startFastifyFloor, startService } from './lib.js'

const seconds = Number(process.env.BENCH_MEMORY_SECONDS ?? 60)
const listSeconds = Number(process.env.BENCH_LIST_SECONDS ?? 30)
const LIST_USERS = 330_000
const CLIENTS = 20
const SLOW = 256 * 1024
const ROUNDS = [
  { encoding: 'identity', rate: Infinity },
  { encoding: 'identity', rate: SLOW },
  { encoding: 'gzip', rate: SLOW },
  { encoding: 'br', rate: SLOW }
]
/** The n-th user of the long lists: each its own, so that compression sees text as varied as real users'. */
const userJson = (n) => `{"name":"User ${n}","age":${n % 100},"email":"user${n}@example.org","registration_date":"2026-11-${String(1 + n % 30).padStart(2, '0')}"}`
const RECORD = path.join(root, 'bench', 'measured', 'memory-peak.json')

/** NODE_OPTIONS of the api container of the base's Deployment. */
function podNodeOptions () {
  const deployment = YAML.parse(fs.readFileSync(path.join(root, 'deploy', 'kubernetes', 'base', 'deployment.yaml'), 'utf8'))
  const api = deployment.spec.template.spec.containers.find((container) => container.name === 'api')
  return api.env?.find((variable) => variable.name === 'NODE_OPTIONS')?.value ?? ''
}

const nodeOptions = process.env.BENCH_NODE_OPTIONS ?? podNodeOptions()
const recorded = process.env.BENCH_NODE_OPTIONS === undefined
const round1 = (value) => Number(value.toFixed(1))

/** The service's number of users (Total-Count of a one-user page). */
async function userCount (server) {
  return Number((await fetch(server.url + '/users', { headers: { range: 'id; limit 1' } })).headers.get('total-count'))
}

/** 2 s after start, idle (30 s after start), after the mixed load: RSS of each server, MiB. */
async function idleAndLoaded (servers) {
  await sleep(2000)
  const started = Object.fromEntries(Object.entries(servers).map(([name, server]) => [name, server.rssMb()]))
  await sleep(28_000)
  const idle = Object.fromEntries(Object.entries(servers).map(([name, server]) => [name, server.rssMb()]))
  const figures = {}
  for (const [name, server] of Object.entries(servers)) {
    for (const { path: endpoint, headers = {} } of ENDPOINTS) {
      await load(server.url + endpoint, { headers, duration: Math.max(1, Math.round(seconds / ENDPOINTS.length)) })
    }
    figures[name] = { startMiB: started[name], idleMiB: idle[name], loadedMiB: server.rssMb() }
  }
  return figures
}

/** One POST /users on a kept-alive connection. */
function post (url, agent, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(url + '/users', { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => res.statusCode < 300 ? resolve(res.headers.location) : reject(new Error(`POST /users: ${res.statusCode}`)))
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** Users POSTed, 16 at a time, until there are `count` (the memory store). */
async function postUsers (service, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
  let next = await userCount(service)
  const worker = async () => {
    while (next < count) await post(service.url, agent, userJson(++next))
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  agent.destroy()
}

/**
 * One user POSTed, then the others inserted in SQL until there are `count`: their JSON as the
 * service writes a user (the same keys, in the same order), marked written by the same serializer
 * as the POSTed one, so that the lists send them as they are stored, as they do the POSTed ones.
 */
async function insertUsers (service, databaseUrl, count) {
  const location = await post(service.url, undefined, userJson(0))
  const id = Number(location?.split('/').pop())
  if (!(id > 0)) throw new Error(`POST /users: Location ${location}`)
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const from = await userCount(service)
    await client.query(`INSERT INTO users (item, serialized_by)
      SELECT ('{"name":"User ' || n || '","age":' || n % 100 || ',"email":"user' || n || '@example.org","registration_date":"2026-11-' || lpad((1 + n % 30)::text, 2, '0') || '"}')::json,
        (SELECT serialized_by FROM users WHERE id = $1)
      FROM generate_series($2::int, $3::int) AS n`, [id, from + 1, count])
  } finally {
    await client.end()
  }
}

/**
 * A client reading GET /users (in `encoding`) at most `rate` bytes a second as received, again
 * when a list ends, until `until` (Date.now()); resolves the bytes received.
 */
function readLists (url, { encoding, rate }, until) {
  return new Promise((resolve, reject) => {
    const begun = performance.now()
    let received = 0
    let settled = false
    const settle = (err) => {
      if (settled) return
      settled = true
      if (err === undefined) resolve(received)
      else reject(err)
    }
    const next = () => {
      if (Date.now() >= until) return settle()
      const request = http.get(url + '/users', { agent: false, headers: encoding === 'identity' ? {} : { 'accept-encoding': encoding } }, (res) => {
        if (res.statusCode !== 200 || (res.headers['content-encoding'] ?? 'identity') !== encoding) {
          res.resume()
          return settle(new Error(`GET /users (${encoding}): ${res.statusCode}, content-encoding ${res.headers['content-encoding']}`))
        }
        res.on('data', (chunk) => {
          received += chunk.length
          if (Date.now() >= until) {
            res.destroy()
            return settle()
          }
          const wait = begun + received / rate * 1000 - performance.now()
          if (wait > 0) {
            res.pause()
            setTimeout(() => res.resume(), wait)
          }
        })
        res.on('end', next)
        res.on('error', () => {})
      })
      request.on('error', (err) => settle(Date.now() >= until ? undefined : err))
    }
    next()
  })
}

/** The memory of the kernel's TCP buffers, all sockets of this network namespace, MiB. */
function tcpBuffersMb () {
  const pages = /^TCP: .* mem (\d+)/m.exec(fs.readFileSync('/proc/net/sockstat', 'utf8'))?.[1]
  return Number(pages) * 4096 / 2 ** 20
}

/** The long-list rounds on a service with its users in place: each round's highest RSS and TCP buffers (sampled), MiB. */
async function listRounds (service) {
  const rounds = []
  for (const round of ROUNDS) {
    let highest = service.rssMb()
    let buffers = tcpBuffersMb()
    const sampler = setInterval(() => {
      highest = Math.max(highest, service.rssMb())
      buffers = Math.max(buffers, tcpBuffersMb())
    }, 100)
    const until = Date.now() + listSeconds * 1000
    const bytes = await Promise.all(Array.from({ length: CLIENTS }, () => readLists(service.url, round, until)))
    clearInterval(sampler)
    rounds.push({
      clients: CLIENTS,
      encoding: round.encoding,
      pace: round.rate === Infinity ? 'as fast as read' : `${round.rate / 1024} KiB/s each`,
      receivedMB: round1(bytes.reduce((sum, count) => sum + count, 0) / 1e6),
      highestRssMiB: round1(Math.max(highest, service.rssMb())),
      tcpBuffersMiB: round1(buffers)
    })
    await sleep(2000)
  }
  return rounds
}

const stores = {}
const bare = {}
const env = { DOCS_CATCH_ALL: 'false', NODE_OPTIONS: nodeOptions }
const service = await startService(env)
let floor
try {
  floor = await startFastifyFloor(await captureEndpoints(service.url), { NODE_OPTIONS: nodeOptions })
  const figures = await idleAndLoaded({ service, 'bare Fastify': floor })
  Object.assign(bare, figures['bare Fastify'])
  await floor.stop()
  floor = undefined
  await postUsers(service, LIST_USERS)
  const rounds = await listRounds(service)
  stores.memory = { ...figures.service, users: await userCount(service), rounds, peakMiB: service.peakRssMb() }
} finally {
  await floor?.stop()
  await service.stop()
}

const database = await startDatabase()
try {
  const databaseUrl = await database.createDatabase('memory_bench')
  const onPostgres = await startService({ ...env, DATABASE_URL: databaseUrl, STORE: 'postgres', DATABASE_POOL_SIZE: String(CLIENTS + 2) })
  try {
    const figures = await idleAndLoaded({ service: onPostgres })
    await insertUsers(onPostgres, databaseUrl, LIST_USERS)
    const rounds = await listRounds(onPostgres)
    stores.postgres = { ...figures.service, users: await userCount(onPostgres), rounds, peakMiB: onPostgres.peakRssMb() }
  } finally {
    await onPostgres.stop()
  }
} finally {
  await database.stop()
}

console.log(`Node ${process.version}, NODE_OPTIONS=${JSON.stringify(nodeOptions)}; ${seconds} s of mixed load (${ENDPOINTS.map((r) => r.path).join(', ')}); rounds of ${listSeconds} s`)
printTable([
  ...Object.entries(stores).map(([store, figures]) => ({ server: `service, ${store} store`, '2 s after start MiB': figures.startMiB, 'idle MiB': figures.idleMiB, 'after load MiB': figures.loadedMiB, 'peak MiB': figures.peakMiB })),
  { server: 'bare Fastify', '2 s after start MiB': bare.startMiB, 'idle MiB': bare.idleMiB, 'after load MiB': bare.loadedMiB, 'peak MiB': '' }
].map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'number' ? round1(value) : value]))))
for (const [store, { users, rounds }] of Object.entries(stores)) {
  console.log(`Long lists, ${store} store, ${users} users (GET /users, ${CLIENTS} clients at once):`)
  printTable(rounds)
}

if (recorded) {
  const record = {
    what: 'RSS (VmRSS, and VmHWM for the peak) of dist/bundle/server.js, production settings, in MiB',
    measured: new Date().toISOString(),
    node: process.version,
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.arch()}`,
    nodeOptions,
    method: `bench/memory.bench.js: on each store, one process: RSS 2 s after start, idle at 30 s, after ${seconds} s of mixed load ` +
      `(${ENDPOINTS.map((r) => r.path).join(', ')}, 50 connections); then ${LIST_USERS} users and ${CLIENTS} clients reading GET /users at once, ` +
      `rounds of ${listSeconds} s: as fast as they read, then at 256 KiB/s each without compression, with gzip, with Brotli. ` +
      'Peak: VmHWM over the process\'s life. TCP buffers: /proc/net/sockstat\'s TCP memory during the rounds, both ends of every connection. ' +
      `PostgreSQL with DATABASE_POOL_SIZE ${CLIENTS + 2}, so that every list streams at once.`,
    stores: Object.fromEntries(Object.entries(stores).map(([store, figures]) => [store, {
      startMiB: round1(figures.startMiB),
      idleMiB: round1(figures.idleMiB),
      loadedMiB: round1(figures.loadedMiB),
      peakMiB: round1(figures.peakMiB),
      tcpBuffersMiB: Math.max(...figures.rounds.map((round) => round.tcpBuffersMiB)),
      users: figures.users,
      rounds: figures.rounds
    }]))
  }
  fs.mkdirSync(path.dirname(RECORD), { recursive: true })
  fs.writeFileSync(RECORD, JSON.stringify(record, null, 2) + '\n')
  console.log(`Recorded in ${path.relative(root, RECORD)} (entry ${path.relative(root, serverEntry)}).`)
} else {
  console.log(`Not recorded: BENCH_NODE_OPTIONS is set, and ${path.relative(root, RECORD)} holds the figures with the pods' options.`)
}
