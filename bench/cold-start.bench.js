// Cold start: from spawning the process to the first 200 on /health, the service (`node
// dist/bundle/server.js`, production settings) against a bare Fastify app with one route on the same Node,
// in alternating runs of the same bench. Medians of BENCH_COLD_RUNS (15: a single start moves a
// lot from one run to the next; figures: bench/README.md). Target: service / bare ≤ 1.5.
// The service keeps V8's code cache beside the bundle (server.ts): the first run writes it, as the
// Docker build does; the service is also measured without it (NODE_DISABLE_COMPILE_CACHE=1).
import path from 'node:path'
import { median, printTable, root, serverEntry, startProcess } from './lib.js'

const TARGET = 1.5
const runs = Number(process.env.BENCH_COLD_RUNS ?? 15)
const production = { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory' }
const sides = {
  service: { args: [serverEntry], env: production, ms: [] },
  'service, no code cache': { args: [serverEntry], env: { ...production, NODE_DISABLE_COMPILE_CACHE: '1' }, ms: [] },
  'bare Fastify': { args: [path.join(root, 'bench', 'fastify-floor.js')], env: { LOG_LEVEL: 'warn' }, ms: [] }
}
for (let i = 0; i < runs; i++) {
  for (const side of Object.values(sides)) {
    const started = performance.now()
    const server = await startProcess(side.args, side.env, '/health', 60_000)
    side.ms.push(performance.now() - started)
    await server.stop()
  }
}
const bare = median(sides['bare Fastify'].ms)
console.log(`Node ${process.version}, spawn → first 200 on /health, medians of ${runs}`)
printTable(Object.entries(sides).filter(([name]) => name !== 'bare Fastify').map(([name, side]) => {
  const ms = median(side.ms)
  return {
    server: name,
    ms: Math.round(ms),
    'bare Fastify ms': Math.round(bare),
    '/ bare': Number((ms / bare).toFixed(2)),
    [`≤ ${TARGET}`]: ms / bare <= TARGET ? 'yes' : 'NO',
    runs: side.ms.map(Math.round).join(' ')
  }
}))
