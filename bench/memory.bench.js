// Memory: resident set size of the service (production settings, memory store) and of a bare
// Fastify app answering the same bytes, same run: 2 s after start, idle once V8's memory reducer
// has run (30 s: it gives back the young generation that start-up grew; figures:
// bench/README.md), and after BENCH_MEMORY_SECONDS (60) of mixed load (the endpoints of
// endpoints.bench.js in turn, 50 connections). VmRSS from /proc, and the peak (VmHWM).
import { ENDPOINTS, captureEndpoints, load, printTable, startFastifyFloor, startService } from './lib.js'
import { setTimeout as sleep } from 'node:timers/promises'

const seconds = Number(process.env.BENCH_MEMORY_SECONDS ?? 60)

const service = await startService({ DOCS_CATCH_ALL: 'false' })
let floor
try {
  floor = await startFastifyFloor(await captureEndpoints(service.url))
  await sleep(2000)
  const rows = []
  const started = { service: service.rssMb(), 'bare Fastify': floor.rssMb() }
  await sleep(28_000)
  const idle = { service: service.rssMb(), 'bare Fastify': floor.rssMb() }
  for (const [name, server] of Object.entries({ service, 'bare Fastify': floor })) {
    for (const { path, headers = {} } of ENDPOINTS) {
      await load(server.url + path, { headers, duration: Math.max(1, Math.round(seconds / ENDPOINTS.length)) })
    }
    rows.push({ server: name, '2 s after start MB': started[name], 'idle RSS MB': idle[name], 'RSS after load MB': server.rssMb(), 'peak RSS MB': server.peakRssMb() })
  }
  const [ours, bare] = rows
  rows.push({
    server: 'service / bare',
    '2 s after start MB': ours['2 s after start MB'] / bare['2 s after start MB'],
    'idle RSS MB': ours['idle RSS MB'] / bare['idle RSS MB'],
    'RSS after load MB': ours['RSS after load MB'] / bare['RSS after load MB'],
    'peak RSS MB': ours['peak RSS MB'] / bare['peak RSS MB']
  })
  console.log(`Node ${process.version}, ${seconds} s of mixed load each (${ENDPOINTS.map((r) => r.path).join(', ')})`)
  printTable(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toFixed(1)) : v]))))
} finally {
  await floor?.stop()
  await service.stop()
}
