// What the service adds on top of Fastify, per example endpoint: server CPU per request (from
// /proc) of the service against, in the same run and alternating rounds,
//   raw     node:http replaying the service's bytes (raw-server.js);
//   floor   Fastify, pino at warn, the route's schema, an async handler, the same bytes
//           (fastify-floor.js, RUNG=3), twice: the second process measures the noise;
//   peer    the floor with the Fastify org's production plugins as they come (PEER=1);
//   floor, held  the floor holding Node's nextTick shape as the service does (HOLD_TICK_SHAPE=1,
//           lib/next-tick-shape.ts): how much of service / floor is that alone.
// Targets: service / floor ≤ 1.15, service / raw ≤ 1.10, and service below the peer by more than
// the noise (the spread of the two floor processes). Production settings, LOG_LEVEL=warn. CPU per
// request is the figure: the load generator shares the two cores, so requests/s moves more.
// BENCH_SETS (3), BENCH_ROUNDS (2 per set) and BENCH_DURATION (2 s): `BENCH_SETS=1 BENCH_ROUNDS=1 npm run bench -- endpoints` is a quick run.
import { ENDPOINTS, captureEndpoints, compare, generator, median, printTable, startRaw, startReplay, startService, summarize } from './lib.js'

const FLOOR_TARGET = 1.15
const RAW_TARGET = 1.1
const sets = Number(process.env.BENCH_SETS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const duration = Number(process.env.BENCH_DURATION ?? 2)

// Production settings; no catch-all: an endpoint that is missing answers 404 instead of the page.
const env = { DOCS_CATCH_ALL: 'false' }
const SERVERS = ['raw', 'floor', 'floor again', 'floor, held', 'peer', 'service']

/**
 * One set of the servers, started afresh: a process keeps the choices its JIT made, which move
 * one process's CPU per request away from another's of the same build (figures: bench/README.md),
 * so each figure is the median over sets of processes, not over rounds of one.
 */
async function measureSet (fixtures) {
  const starts = {
    raw: () => startRaw(fixtures),
    floor: () => startReplay('fastify-floor.js', fixtures, { RUNG: '3' }),
    'floor again': () => startReplay('fastify-floor.js', fixtures, { RUNG: '3' }),
    'floor, held': () => startReplay('fastify-floor.js', fixtures, { RUNG: '3', HOLD_TICK_SHAPE: '1' }),
    peer: () => startReplay('fastify-floor.js', fixtures, { RUNG: '3', PEER: '1' }),
    service: () => startService(env)
  }
  const servers = []
  try {
    for (const name of SERVERS) servers.push(await starts[name]())
    console.log(SERVERS.map((name, index) => `${name}: ${servers[index].url}`).join(', '))
    const results = []
    for (const { path, headers = {} } of ENDPOINTS) {
      const figures = await compare(servers, path, { headers, rounds, duration })
      results.push(Object.fromEntries(SERVERS.map((name, index) => [name, figures[index].cpuMicros])))
    }
    return results
  } finally {
    for (const server of servers) await server.stop()
  }
}

// The bytes the baselines replay: what the service answers for each endpoint.
const service = await startService(env)
const fixtures = await captureEndpoints(service.url).finally(() => service.stop())

const measured = []
for (let set = 0; set < sets; set++) measured.push(await measureSet(fixtures))

const rows = []
const summary = []
for (const [index, { path, headers = {} }] of ENDPOINTS.entries()) {
  const endpoint = path + (headers.range === undefined ? '' : `, Range: ${headers.range}`)
  const perSet = measured.map((set) => set[index])
  const micros = (name) => median(perSet.map((set) => set[name]))
  // Ratios within each set (the same processes, the same minutes), then their median.
  const ratio = (a, b) => median(perSet.map((set) => set[a] / set[b]))
  // The noise: how far two processes of the same floor fell apart, the worst set.
  const noise = Math.max(...perSet.map((set) => Math.abs(set['floor again'] / set.floor - 1)))
  const overFloor = ratio('service', 'floor')
  const overPeer = ratio('service', 'peer')
  const overRaw = ratio('service', 'raw')
  rows.push({
    endpoint,
    'µs raw': round(micros('raw')),
    'µs floor': round(micros('floor')),
    'µs floor, held': round(micros('floor, held')),
    'µs peer': round(micros('peer')),
    'µs service': round(micros('service')),
    'floor / raw': round(ratio('floor', 'raw'), 2),
    'service / floor': round(overFloor, 2),
    [`≤ ${FLOOR_TARGET}`]: overFloor <= FLOOR_TARGET ? 'yes' : 'NO',
    'service / floor, held': round(ratio('service', 'floor, held'), 2),
    'service / raw': round(overRaw, 2),
    [`≤ ${RAW_TARGET}`]: overRaw <= RAW_TARGET ? 'yes' : 'NO',
    'service / peer': round(overPeer, 2),
    noise: `±${round(noise * 100, 0)} %`,
    'below peer beyond noise': overPeer < 1 - noise ? 'yes' : 'NO'
  })
  summary.push(
    { figure: `${endpoint}: service / floor`, ratio: round(overFloor, 2), target: `≤ ${FLOOR_TARGET}`, met: overFloor <= FLOOR_TARGET ? 'yes' : 'NO' },
    { figure: `${endpoint}: service / raw`, ratio: round(overRaw, 2), target: `≤ ${RAW_TARGET}`, met: overRaw <= RAW_TARGET ? 'yes' : 'NO' },
    { figure: `${endpoint}: service / peer`, ratio: round(overPeer, 2), target: `< ${round(1 - noise, 2)} (1 − noise)`, met: overPeer < 1 - noise ? 'yes' : 'NO' }
  )
}
console.log(`Node ${process.version}, ${generator} -c50, ${sets} set(s) of processes × ${rounds} round(s) of ${duration} s per server and endpoint, medians over sets`)
printTable(rows)
summarize(summary)

function round (value, digits = 1) {
  return Number(value.toFixed(digits))
}
