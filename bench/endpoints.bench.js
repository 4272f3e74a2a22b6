// Per-request cost of the example endpoints: the service's CPU time per request (from /proc) against
// a raw node:http server replaying the same bytes (status, headers, body) and a bare Fastify app
// doing the same, measured in the same run, in alternating rounds (medians). CPU per request is the
// figure: the load generator shares the two cores, so requests/s moves more. Target: service/raw
// ≤ 1.25 on each endpoint, at LOG_LEVEL=warn; the service at LOG_LEVEL=info is measured beside it
// (what the two request log lines cost).
// BENCH_SETS (3), BENCH_ROUNDS (1 per set) and BENCH_DURATION (seconds): `BENCH_SETS=1 BENCH_DURATION=1 npm run bench -- endpoints` is a quick run.
import { ENDPOINTS, captureEndpoints, compare, generator, median, printTable, startFastifyFloor, startRaw, startService } from './lib.js'

const TARGET = 1.25
const sets = Number(process.env.BENCH_SETS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 1)
const duration = Number(process.env.BENCH_DURATION ?? 4)

// Production settings; no catch-all: an endpoint that is missing answers 404 instead of the page.
const env = { DOCS_CATCH_ALL: 'false' }

/**
 * One set of the four servers, started afresh: a process keeps the choices its JIT made, which
 * moved one process's CPU per request by 10–20 % against another's of the same build here, so each
 * figure is the median over sets of processes, not over rounds of one.
 */
async function measureSet (fixtures) {
  const servers = []
  try {
    for (const start of [() => startService(env), () => startRaw(fixtures), () => startFastifyFloor(fixtures), () => startService({ ...env, LOG_LEVEL: 'info' })]) {
      servers.push(await start())
    }
    const results = []
    for (const { path, headers = {} } of ENDPOINTS) results.push(await compare(servers, path, { headers, rounds, duration }))
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

/** The median over sets of one server's figure for one endpoint. */
const figure = (endpoint, server, key) => median(measured.map((set) => set[endpoint][server][key]))

const rows = ENDPOINTS.map(({ path, headers = {} }, endpoint) => {
  const [ours, bare, fastify, info] = [0, 1, 2, 3].map((server) => figure(endpoint, server, 'cpuMicros'))
  const ratio = ours / bare
  return {
    endpoint: path + (headers.range === undefined ? '' : `, Range: ${headers.range}`),
    'µs CPU/req: service': Number(ours.toFixed(1)),
    'raw node:http': Number(bare.toFixed(1)),
    'bare Fastify': Number(fastify.toFixed(1)),
    'service / raw': Number(ratio.toFixed(2)),
    [`≤ ${TARGET}`]: ratio <= TARGET ? 'yes' : 'NO',
    'bare Fastify / raw': Number((fastify / bare).toFixed(2)),
    'service / bare Fastify': Number((ours / fastify).toFixed(2)),
    'info logs: µs added': Number((info - ours).toFixed(1)),
    'req/s service / raw': Number((figure(endpoint, 0, 'rps') / figure(endpoint, 1, 'rps')).toFixed(2))
  }
})
console.log(`Node ${process.version}, ${generator} -c50, ${sets} set(s) of processes × ${rounds} round(s) of ${duration} s per server and endpoint, medians over sets`)
printTable(rows)
