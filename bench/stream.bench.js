// Streaming: GET /userStream?count=1000000 (about 92 MB of NDJSON) read to its end, one request
// at a time: MB/s (median of BENCH_ROUNDS runs, default 5) and the service's peak RSS
// (target: < 150 MB). Baseline, in the same run: a bare node:http server writing the same bytes
// from memory in 64 KiB chunks (this file, run with --baseline), i.e. what the loopback and the
// client can take. `BENCH_ROUNDS=1 npm run bench -- stream` for a quick run.
import http from 'node:http'
import { median, printTable, startProcess, startService } from './lib.js'

const COUNT = 1_000_000
const RSS_TARGET_MB = 150
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)

const LINES = [
  '{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"}\n',
  '{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}\n',
  '{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}\n'
]
const cycleBytes = Buffer.byteLength(LINES.join(''))
const EXPECTED_BYTES = Math.floor(COUNT / 3) * cycleBytes +
  LINES.slice(0, COUNT % 3).reduce((sum, line) => sum + Buffer.byteLength(line), 0)

if (process.argv.includes('--baseline')) {
  // The same body as the service's, precomputed: whole cycles in one ~64 KiB chunk, then the rest.
  const cycles = Math.floor(64 * 1024 / cycleBytes)
  const chunk = Buffer.from(LINES.join('').repeat(cycles))
  http.createServer((req, res) => {
    if (req.url === '/health') return res.end('{"status":"ok"}')
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    let left = Math.floor(COUNT / 3)
    const pump = () => {
      while (left >= cycles) {
        left -= cycles
        if (!res.write(chunk)) return res.once('drain', pump)
      }
      res.end(LINES.join('').repeat(left) + LINES.slice(0, COUNT % 3).join(''))
    }
    pump()
  }).listen(Number(process.env.PORT), '127.0.0.1')
} else {
  await main()
}

/** One GET read to its end: MB/s (10^6 bytes per second). */
function download (url) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    http.get(url, { agent: false }, (res) => {
      let bytes = 0
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('error', reject)
      res.on('end', () => {
        const seconds = (performance.now() - started) / 1000
        if (res.statusCode !== 200 || bytes !== EXPECTED_BYTES) {
          return reject(new Error(`${url}: status ${res.statusCode}, ${bytes} bytes instead of ${EXPECTED_BYTES}`))
        }
        resolve(bytes / 1e6 / seconds)
      })
    }).on('error', reject)
  })
}

async function main () {
  const service = await startService()
  let baseline
  try {
    baseline = await startProcess([import.meta.filename, '--baseline'], {}, '/health')
    const path = `/userStream?count=${COUNT}`
    await download(service.url + path)
    await download(baseline.url + path)
    const ours = []
    const bare = []
    for (let i = 0; i < rounds; i++) {
      ours.push(await download(service.url + path))
      bare.push(await download(baseline.url + path))
    }
    const rss = service.peakRssMb()
    console.log(`GET ${path}: ${(EXPECTED_BYTES / 1e6).toFixed(1)} MB per response, ${rounds} round(s) after a warm-up, medians`)
    printTable([{
      'service MB/s': Number(median(ours).toFixed(1)),
      'baseline MB/s': Number(median(bare).toFixed(1)),
      'service/baseline': Number((median(ours) / median(bare)).toFixed(3)),
      'service peak RSS MB': Number(rss.toFixed(1)),
      [`RSS < ${RSS_TARGET_MB} MB`]: rss < RSS_TARGET_MB ? 'yes' : 'NO'
    }])
    if (rss >= RSS_TARGET_MB) process.exitCode = 1
  } finally {
    await baseline?.stop()
    await service.stop()
  }
}
