// Runs every bench/*.bench.js in turn, each in a process of its own.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const only = process.argv.slice(2)
const files = fs.readdirSync(import.meta.dirname)
  .filter((file) => file.endsWith('.bench.js'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort()
let failed = 0
for (const file of files) {
  console.log(`\n## ${file}`)
  const run = spawnSync(process.execPath, [path.join(import.meta.dirname, file)], { stdio: 'inherit' })
  if (run.status !== 0) failed++
}
process.exitCode = failed > 0 ? 1 : 0
