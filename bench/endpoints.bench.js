// Throughput of the example endpoints against a raw node:http server sending the same bytes,
// measured in the same run (alternating rounds, medians). Target: service/raw ≥ 0.85 on each.
// A bare Fastify app sending the same bytes is measured beside them: the framework's own floor.
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- endpoints`.
import { capture, compare, printTable, startFastifyFloor, startRaw, startService } from './lib.js'

const TARGET = 0.85
const PATHS = ['/hello?name=x', '/users', '/position/1/2', '/persons']
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const duration = Number(process.env.BENCH_DURATION ?? 5)

// No catch-all: an endpoint that is missing answers 404 instead of the description page.
const service = await startService({ DOCS_CATCH_ALL: 'false' })
let raw
let floor
try {
  const fixtures = {}
  for (const path of PATHS) {
    const answer = await capture(service.url, path)
    if (answer.status === 200) fixtures[path] = answer
    else console.log(`skipping ${path}: the service answers ${answer.status}`)
  }
  raw = await startRaw(fixtures)
  floor = await startFastifyFloor(fixtures)

  const rows = []
  for (const path of Object.keys(fixtures)) {
    const [ours, bare, fastify] = await compare([service, raw, floor], path, { rounds, duration })
    const ratio = ours.rps / bare.rps
    rows.push({
      path,
      'service req/s': Math.round(ours.rps),
      'raw req/s': Math.round(bare.rps),
      'service/raw': Number(ratio.toFixed(3)),
      [`≥ ${TARGET}`]: ratio >= TARGET ? 'yes' : 'NO',
      'bare Fastify/raw': Number((fastify.rps / bare.rps).toFixed(3)),
      'µs CPU/req: service': Number(ours.cpuMicros.toFixed(1)),
      'µs raw': Number(bare.cpuMicros.toFixed(1)),
      'µs bare Fastify': Number(fastify.cpuMicros.toFixed(1))
    })
  }
  console.log(`${rounds} round(s) of ${duration} s per server and path, medians; service peak RSS ${service.peakRssMb().toFixed(0)} MB`)
  printTable(rows)
} finally {
  await floor?.stop()
  await raw?.stop()
  await service.stop()
}
