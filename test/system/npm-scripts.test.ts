import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { projectRoot } from '../../lib/project-root.js'
import { get } from '../helpers/shutdown.js'

// A signal to `npm start` or `npm run dev` reaches the server and drains it (docs/operations.md,
// "Probes, shutdown and overload"): npm, as a process manager or a terminal signals it, with the
// scripts of package.json as they are. npm runs a script with `sh -c`, and Debian's sh (dash) does
// not replace itself with the script's last command: without `exec` in the script, the SIGTERM npm
// forwards killed the shell, and the server, orphaned, served on.

const scripts = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts as Record<string, string>

interface NpmRun {
  npm: ChildProcess
  /** stdout's lines so far (npm's own, and the app's). */
  lines: string[]
  /** Resolves with the first line (already written or to come) that matches. */
  line: (matches: RegExp) => Promise<string>
  /** npm's exit: its code, or its signal. */
  exited: Promise<number | string>
}

/**
 * `npm run <script>` in `cwd`, in a process group of its own, as a shell gives a job: the group can
 * be signalled as a terminal does (Ctrl-C), and whatever of it is left when the test ends is
 * killed (a server orphaned by the shell included: it stays in the group).
 */
function npmRun (t: Test, cwd: string, script: string, env: Record<string, string>): NpmRun {
  const npm = spawn('npm', ['run', script], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true
  })
  t.teardown(() => {
    try { process.kill(-npm.pid!, 'SIGKILL') } catch {}
  })
  const exited = once(npm, 'exit').then(([code, signal]) => (code ?? signal) as number | string)
  const lines: string[] = []
  const reader = createInterface({ input: npm.stdout! })
  reader.on('line', (text) => lines.push(text))
  const line = (matches: RegExp) => new Promise<string>((resolve, reject) => {
    const found = lines.find((text) => matches.test(text))
    if (found !== undefined) return resolve(found)
    const onLine = (text: string) => {
      if (!matches.test(text)) return
      reader.off('line', onLine)
      resolve(text)
    }
    reader.on('line', onLine)
    exited.then((end) => reject(new Error(`npm exited (${end}) before a line matched ${matches}`)), reject)
  })
  return { npm, lines, line, exited }
}

/** Whether a connection to the port is refused: nothing listens on it any more. */
function refused (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.on('connect', () => { socket.destroy(); resolve(false) })
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'))
  })
}

/** The first of two promises to settle, by name. */
function first<A, B> (a: Promise<A>, b: Promise<B>): Promise<'first' | 'second'> {
  return Promise.race([a.then(() => 'first' as const, () => 'first' as const), b.then(() => 'second' as const, () => 'second' as const)])
}

/**
 * A copy of the project as `npm start` sees it, with package.json's `start` script as it is and a
 * build that does nothing: the tests' build (npm run test:system) serves, and stays whole for the
 * suites that run beside this one.
 */
function startProject (t: Test): string {
  const dir = t.testdir({ 'package.json': JSON.stringify({ name: 'npm-start', private: true, scripts: { build: 'node -e 0', start: scripts.start } }) })
  fs.symlinkSync(path.join(projectRoot, 'dist'), path.join(dir, 'dist'))
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'))
  return dir
}

/** A bound on a hang only: each test waits for a few seconds of work (a start, a compile of one file, a drain). */
const BOUNDED = { timeout: 120_000 }

const SERVER_ENV = { HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info', PRESSURE_MAX_EVENT_LOOP_DELAY: '0', SHUTDOWN_DRAIN: '60000', SHUTDOWN_GRACE: '120000' }

/** npm start, listening: its URL. */
async function npmStart (t: Test) {
  const run = npmRun(t, startProject(t), 'start', SERVER_ENV)
  const listening = await run.line(/"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/)
  const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]!
  return { ...run, url, port: Number(new URL(url).port) }
}

t.test('SIGTERM to npm start: the server drains (an open connection answered, with Connection: close), exits 0, npm after it; the port is free', BOUNDED, async (t) => {
  const { npm, line, lines, exited, url, port } = await npmStart(t)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  t.equal((await get(`${url}/ready`, agent)).status, 200, 'ready, on a kept-alive connection')

  npm.kill('SIGTERM')
  const drain = line(/"msg":"closing: new connections refused, open ones drained"/)
  t.equal(await first(drain, exited), 'first', 'the server begins its drain before npm exits')
  t.match(await line(/"msg":"closing: finishing in-flight requests"/), /"signal":"SIGTERM"/, 'on npm\'s SIGTERM')
  const during = await get(`${url}/ready`, agent)
  t.equal(during.status, 503, 'a request on the open connection is still answered: not ready, shutting down')
  t.equal(during.headers.connection, 'close', 'and its connection closed after the answer, which ends the drain')
  t.equal(await exited, 0, 'npm exits with the server\'s code: 0, the drain complete')
  t.ok(await refused(port), 'nothing listens on the port any more')
  t.notOk(lines.some((text) => text.includes('second SIGTERM')), 'one SIGTERM')
})

t.test('Ctrl-C on npm start (SIGINT to npm and the server, as a terminal sends it, and npm\'s copy): one drain, exit 0', BOUNDED, async (t) => {
  const { npm, line, lines, exited, port } = await npmStart(t)
  process.kill(-npm.pid!, 'SIGINT')
  t.match(await line(/"msg":"closing: finishing in-flight requests"/), /"signal":"SIGINT"/, 'the close begins')
  t.equal(await exited, 0, 'exit 0: npm\'s copy of the signal is not taken for a second Ctrl-C')
  t.notOk(lines.some((text) => text.includes('second SIGINT')), 'no "second SIGINT, exiting"')
  t.ok(await refused(port), 'nothing listens on the port any more')
})

/**
 * A project as `npm run dev` sees it, with package.json's `dev` script and scripts/dev.js,
 * scripts/dev-loop.js and what they import as they are, and for the app a plugin of one slow
 * route: fastify-cli's drain is held with the service's own app by test/system/cli.test.ts.
 */
function devProject (t: Test): string {
  const dir = t.testdir({
    'package.json': JSON.stringify({ name: 'npm-run-dev', private: true, type: 'module', scripts: { dev: scripts.dev } }),
    'tsconfig.build.json': JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2023', outDir: 'dist', rootDir: '.', types: [] },
      include: ['cli.ts']
    }),
    'cli.ts': [
      '// The app of npm run dev, as fastify-cli reads cli.ts: the plugin, and its settings.',
      '// fastify-cli wants two parameters.',
      'export default async function app (fastify: { get: (path: string, handler: () => Promise<unknown>) => void }, _opts: unknown) {',
      '  fastify.get(\'/slow\', async () => { await new Promise((resolve) => setTimeout(resolve, 1000)); return { slow: true } })',
      '}',
      'export const address = \'127.0.0.1\'',
      'export const port = 0',
      'export const logLevel = \'info\'',
      'export const closeGraceDelay = 60000'
    ].join('\n'),
    scripts: {},
    lib: {}
  })
  for (const file of ['scripts/dev.js', 'scripts/dev-loop.js', 'lib/close-signals.ts']) fs.copyFileSync(path.join(projectRoot, file), path.join(dir, file))
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'))
  return dir
}

for (const { how, signal } of [
  { how: 'SIGTERM to npm run dev', signal: (npm: ChildProcess) => npm.kill('SIGTERM') },
  { how: 'Ctrl-C on npm run dev (SIGINT to npm and dev.js, and npm\'s copy)', signal: (npm: ChildProcess) => process.kill(-npm.pid!, 'SIGINT') }
]) {
  t.test(`${how}: the app drains (a request under way answered), exits, npm after it; the port is free`, BOUNDED, async (t) => {
    const { npm, line, exited } = npmRun(t, devProject(t), 'dev', {})
    const listening = await line(/Server listening at http:\/\/127\.0\.0\.1:\d+/)
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]!
    const answer = get(`${url}/slow`)
    await line(/incoming request/)
    signal(npm)
    const answered = await answer
    t.equal(answered.status, 200, 'the request under way is answered')
    t.same(JSON.parse(answered.body), { slow: true })
    t.equal(await exited, 0, 'npm exits 0 once dev.js and the app have')
    t.ok(await refused(Number(new URL(url).port)), 'nothing listens on the port any more')
  })
}
