// What the production plugins (request ids, helmet, CORS, compression, metrics, rate limits) cost
// per request on GET /hello: the service with its defaults, the same with the global rate limit on,
// and the service without them (service-without-edge.js), in alternating rounds of the same run.
// Server CPU time per request (from /proc) is the figure; the load generator shares the cores, so
// requests/s is shown but moves more. Two kinds of request: a bare GET, and one as a browser or a
// proxy sends it (Accept-Encoding, X-Request-Id, an allowed Origin).
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- edge`.
import { compare, printTable, startService, startServiceWithoutEdge } from './lib.js'

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 4)
const env = { DOCS_CATCH_ALL: 'false', CORS_ORIGINS: 'https://shop.example' }

const servers = {
  'without them': await startServiceWithoutEdge(env),
  defaults: await startService(env),
  'global rate limit on': await startService({ ...env, RATE_LIMIT_MAX: '100000000' })
}
const REQUESTS = {
  'GET /hello?name=x, no headers': {},
  'the same, as a browser behind a proxy': { 'accept-encoding': 'gzip, deflate, br', 'x-request-id': 'b1946ac9-2d4f-4a3b-9c1e-5d2f7a8e6b01', origin: 'https://shop.example' }
}
try {
  const rows = []
  for (const [label, headers] of Object.entries(REQUESTS)) {
    const results = await compare(Object.values(servers), '/hello?name=x', { headers, rounds, duration })
    const [baseline] = results
    for (const [index, name] of Object.keys(servers).entries()) {
      rows.push({
        request: label,
        service: name,
        'req/s': Math.round(results[index].rps),
        'µs CPU/req': Number(results[index].cpuMicros.toFixed(1)),
        'µs added': index === 0 ? '' : Number((results[index].cpuMicros - baseline.cpuMicros).toFixed(1))
      })
    }
  }
  console.log(`${rounds} round(s) of ${duration} s per server and request, medians`)
  printTable(rows)
} finally {
  for (const server of Object.values(servers)) await server.stop()
}
