// Cold start: from spawning the process to the first 200 on /health, the service (`node
// dist/bundle/server.js`, production settings) against a bare Fastify app with one route on the same Node,
// in alternating runs of the same bench. Medians of BENCH_COLD_RUNS (7). Target: service / bare ≤ 1.5.
import path from 'node:path'
import { median, printTable, root, serverEntry, startProcess } from './lib.js'

const TARGET = 1.5
const runs = Number(process.env.BENCH_COLD_RUNS ?? 7)
const sides = {
  service: { args: [serverEntry], env: { LOG_LEVEL: 'warn', NODE_ENV: 'production' }, ms: [] },
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
const service = median(sides.service.ms)
const bare = median(sides['bare Fastify'].ms)
console.log(`Node ${process.version}, spawn → first 200 on /health, medians of ${runs}`)
printTable([{
  'service ms': Math.round(service),
  'bare Fastify ms': Math.round(bare),
  'service / bare': Number((service / bare).toFixed(2)),
  [`≤ ${TARGET}`]: service / bare <= TARGET ? 'yes' : 'NO',
  'service runs': sides.service.ms.map(Math.round).join(' ')
}])
