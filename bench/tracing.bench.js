// What tracing costs (lib/tracing.ts): the service as it runs by default (tracing off) against the
// same with OTEL_EXPORTER_OTLP_ENDPOINT set, exporting to a sink of this process that answers 200
// (the batches as in production: 512 spans, every 5 s, a queue of 2048), in alternating rounds of
// the same run. Server CPU per request (from /proc) is the figure; the exporter's work (batching,
// JSON, HTTP) is the server's and counted, the sink's is not. Two requests: GET /hello?name=x (the
// request span alone) and GET /users/1 on PostgreSQL (with the pool's connect and the query's).
// The sink counts the spans it received: fewer than the requests made means the queue dropped some.
// Then spawn → first 200 on /health, off and on, medians of BENCH_COLD_RUNS (9).
// BENCH_BASELINE_SERVER=<another build's dist/bundle/server.js> adds that build (tracing off) to
// both: what tracing off costs against the build before it.
// BENCH_ROUNDS and BENCH_DURATION (seconds) shorten a run: `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- tracing`.
import http from 'node:http'
import { compare, median, printTable, startDatabase, startProcess, startService } from './lib.js'

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 4)
const coldRuns = Number(process.env.BENCH_COLD_RUNS ?? 9)
const baseline = process.env.BENCH_BASELINE_SERVER

/** The collector: answers every export 200 and counts the spans, by service name. */
const spans = new Map()
const sink = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    for (const { resource, scopeSpans } of JSON.parse(Buffer.concat(chunks).toString('utf8')).resourceSpans) {
      const name = resource.attributes.find(({ key }) => key === 'service.name').value.stringValue
      const count = scopeSpans.reduce((sum, scope) => sum + scope.spans.length, 0)
      spans.set(name, (spans.get(name) ?? 0) + count)
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${sink.address().port}`

/** The sides of one store: tracing off, on (its spans counted under `service`), and the baseline build if given. */
async function sides (env, service) {
  return {
    'tracing off': await startService(env),
    'tracing on': await startService({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: service }),
    ...(baseline === undefined ? {} : { 'baseline build': await startProcess([baseline], { LOG_LEVEL: 'warn', NODE_ENV: 'production', STORE: 'memory', ...env }, '/health', 60_000) })
  }
}

const database = await startDatabase()
const started = []
try {
  const url = await database.createDatabase('bench_tracing')
  const cases = [
    { request: 'GET /hello?name=x', path: '/hello?name=x', service: 'bench-memory', servers: await sides({}, 'bench-memory') },
    { request: 'GET /users/1 (PostgreSQL)', path: '/users/1', service: 'bench-postgres', servers: await sides({ STORE: 'postgres', DATABASE_URL: url }, 'bench-postgres') }
  ]
  for (const { servers } of cases) started.push(...Object.values(servers))

  const rows = []
  for (const { request, path, service, servers } of cases) {
    const results = await compare(Object.values(servers), path, { rounds, duration })
    // The traced side stops now: the close exports its last batch, and every span sent is counted.
    const traced = servers['tracing on']
    await traced.stop()
    started.splice(started.indexOf(traced), 1)
    const [off] = results
    for (const [index, name] of Object.keys(servers).entries()) {
      rows.push({
        request,
        service: name,
        'req/s': Math.round(results[index].rps),
        'µs CPU/req': Number(results[index].cpuMicros.toFixed(1)),
        'µs vs off': index === 0 ? '' : Number((results[index].cpuMicros - off.cpuMicros).toFixed(1)),
        'spans / req': name === 'tracing on' ? Number(((spans.get(service) ?? 0) / results[index].requests).toFixed(2)) : ''
      })
    }
  }
  console.log(`${rounds} round(s) of ${duration} s per server and request, medians`)
  printTable(rows)

  // Spawn → first 200 on /health, alternating.
  const cold = { 'tracing off': [], 'tracing on': [] }
  for (let i = 0; i < coldRuns; i++) {
    for (const [name, env] of [['tracing off', {}], ['tracing on', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'bench-cold' }]]) {
      const begun = performance.now()
      const server = await startService(env)
      cold[name].push(performance.now() - begun)
      await server.stop()
    }
  }
  console.log(`spawn → first 200 on /health (memory store, production settings), medians of ${coldRuns}`)
  printTable(Object.entries(cold).map(([name, ms]) => ({ service: name, ms: Math.round(median(ms)), runs: ms.map(Math.round).join(' ') })))
} finally {
  for (const server of started) await server.stop()
  await database.stop()
  sink.close()
}
