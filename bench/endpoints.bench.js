// Per-request cost of the example endpoints: the service's CPU time per request (from /proc) against
// a raw node:http server replaying the same bytes (status, headers, body) and a bare Fastify app
// doing the same, measured in the same run, in alternating rounds (medians). CPU per request is the
// figure: the load generator shares the two cores, so requests/s moves more. Target: service/raw
// ≤ 1.25 on each endpoint, at LOG_LEVEL=warn; the service at LOG_LEVEL=info is measured beside it
// (what the two request log lines cost).
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- endpoints`.
import { ENDPOINTS, capture, compare, generator, printTable, startFastifyFloor, startRaw, startService } from './lib.js'

const TARGET = 1.25
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 4)

// Production settings; no catch-all: an endpoint that is missing answers 404 instead of the page.
const env = { DOCS_CATCH_ALL: 'false' }
const service = await startService(env)
const logged = await startService({ ...env, LOG_LEVEL: 'info' })
let raw
let floor
try {
  const fixtures = {}
  for (const { path, headers } of ENDPOINTS) {
    const answer = await capture(service.url, path, headers)
    if (answer.status >= 300) throw new Error(`${path}: the service answers ${answer.status}`)
    fixtures[path] = answer
  }
  raw = await startRaw(fixtures)
  floor = await startFastifyFloor(fixtures)

  const rows = []
  for (const { path, headers = {} } of ENDPOINTS) {
    const [ours, bare, fastify, info] = await compare([service, raw, floor, logged], path, { headers, rounds, duration })
    const ratio = ours.cpuMicros / bare.cpuMicros
    rows.push({
      endpoint: path + (headers.range === undefined ? '' : `, Range: ${headers.range}`),
      'µs CPU/req: service': Number(ours.cpuMicros.toFixed(1)),
      'raw node:http': Number(bare.cpuMicros.toFixed(1)),
      'bare Fastify': Number(fastify.cpuMicros.toFixed(1)),
      'service / raw': Number(ratio.toFixed(2)),
      [`≤ ${TARGET}`]: ratio <= TARGET ? 'yes' : 'NO',
      'bare Fastify / raw': Number((fastify.cpuMicros / bare.cpuMicros).toFixed(2)),
      'info logs: µs added': Number((info.cpuMicros - ours.cpuMicros).toFixed(1)),
      'req/s service / raw': Number((ours.rps / bare.rps).toFixed(2))
    })
  }
  console.log(`Node ${process.version}, ${generator} -c50, ${rounds} round(s) of ${duration} s per server and endpoint, medians`)
  printTable(rows)
} finally {
  await floor?.stop()
  await raw?.stop()
  await logged.stop()
  await service.stop()
}
