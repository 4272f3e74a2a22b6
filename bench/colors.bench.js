// Range pagination at scale: GET /colors with `Range: name; limit 10` on the 59 colours and on
// 1,000,000 generated ones (service-with-colors.js gives the route its collection), two services
// measured in the same run, in alternating rounds. Prints the median p50 latency and requests/s
// of each, the ratio 1,000,000 / 59 (target: p50 within 2x, since a request costs O(log n +
// limit)), the start-up cost of each (cold start to the first 200 on /health, which answers only
// once the colours are indexed) and the peak RSS. BENCH_ROUNDS (default 5) and BENCH_DURATION (seconds
// per round, default 5): `BENCH_ROUNDS=1 BENCH_DURATION=1 npm run bench -- colors` is a quick run.
import { load, median, printTable, startServiceWithColors, waitFor } from './lib.js'

const LARGE = 1_000_000
const TARGET_RATIO = 2
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 4)
const headers = { range: 'name; limit 10' }

async function start (label, count) {
  const started = performance.now()
  const service = await startServiceWithColors(count)
  const startupMs = performance.now() - started
  // Indexing a million colours blocks the event loop for seconds: the overload guard answers 503
  // until its next event-loop sample, and /ready says so. Wait for ready, as a proxy would.
  await waitFor(`${service.url}/ready`, 30_000)
  // The service must answer what it is meant to: a page of 10, and the next range.
  const res = await fetch(`${service.url}/colors`, { headers })
  const page = await res.json()
  if (res.status !== 206 || page.length !== 10 || res.headers.get('next-range') === null) {
    await service.stop()
    throw new Error(`${label}: unexpected answer ${res.status}, ${page.length} colours`)
  }
  return { label, service, startupMs, total: res.headers.get('total-count'), p50: [], rps: [], rssMb: 0 }
}

const small = await start('59 colours', 0)
let large
try {
  large = await start(`${LARGE.toLocaleString('en')} colours`, LARGE)
} catch (err) {
  await small.service.stop()
  throw err
}

try {
  if (small.total !== '59' || large.total !== String(LARGE)) {
    throw new Error(`Total-Count: ${small.total} and ${large.total}`)
  }
  for (const side of [small, large]) await load(`${side.service.url}/colors`, { headers, duration: 1 })
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? [small, large] : [large, small]) {
      const result = await load(`${side.service.url}/colors`, { headers, duration })
      side.p50.push(result.p50)
      side.rps.push(result.rps)
    }
  }
  for (const side of [small, large]) side.rssMb = side.service.peakRssMb()
} finally {
  await small.service.stop()
  await large.service.stop()
}

printTable([small, large].map((side) => ({
  collection: side.label,
  'p50 latency (ms, median)': median(side.p50),
  'requests/s (median)': Math.round(median(side.rps)),
  'start-up to first 200 (ms)': Math.round(side.startupMs),
  'peak RSS (MB)': Math.round(side.rssMb)
})))
const ratio = median(large.p50) / median(small.p50)
const rpsRatio = median(small.rps) / median(large.rps)
console.log(`p50 latency 1,000,000 / 59: ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}); ` +
  `requests/s 59 / 1,000,000: ${rpsRatio.toFixed(2)}`)
console.log(`start-up cost of generating and indexing ${LARGE.toLocaleString('en')} colours: ${Math.round(large.startupMs - small.startupMs)} ms`)
