// Cold start: from spawning the process to the first 200 on /health, the service (production
// settings, memory store) against a bare Fastify app with one route on the same Node, in
// alternating runs of the same bench. Medians of BENCH_COLD_RUNS (15: a single start moves a lot
// from one run to the next; figures: bench/README.md). Target: service / bare ≤ 1.0.
// The service is started three ways: `node dist/bundle/server.js`, the bundle through V8's code
// cache (server.ts), as npm start and the image run it; the same without the cache
// (NODE_DISABLE_COMPILE_CACHE=1); and from a V8 startup snapshot of the service, which this bench
// builds first (snapshot.js: tried as the production start, and slower; docs/build.md).
// One start of each before the measured ones writes the code caches, as the Docker build does.
// Besides the time to the first 200, the CPU the process had used by then (user + system, from
// /proc): on a machine shared with other work, the steadier figure of the two.
import { median, printTable, serverEntry, startProcess, summarize } from './lib.js'
import { buildSnapshot } from './snapshot.js'

const TARGET = 1.0
const runs = Number(process.env.BENCH_COLD_RUNS ?? 15)
const production = { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory' }
// The bare app is written here: one route, pino at warn, nothing else loaded (fastify-floor.js
// also loads the service's schemas).
const BARE = [
  "import Fastify from 'fastify'",
  "const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } })",
  "app.get('/health', async () => ({ status: 'ok' }))",
  'await app.listen({ host: process.env.HOST, port: Number(process.env.PORT) })'
].join('\n')
const sides = {
  'service (code cache)': { args: [serverEntry], env: production },
  'service (snapshot)': { args: ['--snapshot-blob', await buildSnapshot()], env: production },
  'service, no code cache': { args: [serverEntry], env: { ...production, NODE_DISABLE_COMPILE_CACHE: '1' } },
  'bare Fastify': { args: ['--input-type=module', '--eval', BARE], env: { LOG_LEVEL: 'warn' } }
}
for (const side of Object.values(sides)) Object.assign(side, { ms: [], cpuMs: [] })
for (let i = -1; i < runs; i++) {
  for (const side of Object.values(sides)) {
    const started = performance.now()
    const server = await startProcess(side.args, side.env, '/health', 60_000)
    const ms = performance.now() - started
    if (i >= 0) {
      side.ms.push(ms)
      side.cpuMs.push(server.cpuMicros() / 1000)
    }
    await server.stop()
  }
}
const bare = sides['bare Fastify']
const [bareMs, bareCpu] = [median(bare.ms), median(bare.cpuMs)]
console.log(`Node ${process.version}, spawn → first 200 on /health, medians of ${runs}; bare Fastify ${Math.round(bareMs)} ms, ${Math.round(bareCpu)} ms of CPU`)
const rows = Object.entries(sides).filter(([, side]) => side !== bare).map(([name, side]) => {
  const [ms, cpu] = [median(side.ms), median(side.cpuMs)]
  return {
    server: name,
    ms: Math.round(ms),
    '/ bare': Number((ms / bareMs).toFixed(2)),
    [`≤ ${TARGET}`]: ms / bareMs <= TARGET ? 'yes' : 'NO',
    'CPU ms': Math.round(cpu),
    'CPU / bare': Number((cpu / bareCpu).toFixed(2)),
    runs: side.ms.map(Math.round).join(' ')
  }
})
printTable(rows)
summarize(rows.map((row) => ({ figure: `cold start, ${row.server} / bare Fastify`, ratio: row['/ bare'], target: `≤ ${TARGET}`, met: row[`≤ ${TARGET}`] })))
