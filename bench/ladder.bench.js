// Where the CPU time of a request goes between raw node:http and the service, on GET /hello?name=x:
// a ladder of servers answering the same bytes, each rung adding one kind of work to the one below
// (fastify-floor.js's rungs), then the service without its production plugins (service-without-edge.js)
// and the service. All run side by side and are loaded in rapid alternation (many short rounds):
// the machine's drift hits every rung alike. Server CPU time per request from /proc, medians.
// BENCH_ROUNDS and BENCH_DURATION (seconds) change the run: `BENCH_ROUNDS=5 npm run bench -- ladder`.
import { captureEndpoints, compare, printTable, startRaw, startReplay, startService, startServiceWithoutEdge } from './lib.js'

const rounds = Number(process.env.BENCH_ROUNDS ?? 15)
const duration = Number(process.env.BENCH_DURATION ?? 1)
const env = { DOCS_CATCH_ALL: 'false' }
const ENDPOINT = '/hello?name=x'

const first = await startService(env)
const fixtures = await captureEndpoints(first.url).finally(() => first.stop())
const rung = (n) => startReplay('fastify-floor.js', fixtures, { RUNG: String(n) })

const servers = {
  'raw node:http': await startRaw(fixtures),
  'Fastify, logger off': await rung(1),
  '+ pino logger at warn (bare Fastify)': await rung(2),
  '+ route schema, async handler': await rung(3),
  '+ 10 hooks doing nothing': await rung(4),
  'the service without its production plugins': await startServiceWithoutEdge(env),
  'the service': await startService(env)
}
try {
  const results = await compare(Object.values(servers), ENDPOINT, { rounds, duration })
  const raw = results[0].cpuMicros
  printTable(Object.keys(servers).map((name, index) => ({
    server: name,
    'µs CPU/req': Number(results[index].cpuMicros.toFixed(1)),
    '/ raw': Number((results[index].cpuMicros / raw).toFixed(2)),
    'µs added': index === 0 ? '' : Number((results[index].cpuMicros - results[index - 1].cpuMicros).toFixed(1)),
    'req/s': Math.round(results[index].rps)
  })))
  console.log(`Node ${process.version}, GET ${ENDPOINT}, ${rounds} alternating round(s) of ${duration} s, medians`)
} finally {
  for (const server of Object.values(servers)) await server.stop()
}
