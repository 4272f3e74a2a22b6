import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type InjectOptions, type LightMyRequestResponse, type RouteOptions } from 'fastify'
import { type Test } from 'tap'
import app, { loggerOptions, plugins, serverOptions as appServerOptions } from '../../app.js'
import { LogDestination } from '../../lib/log-destination.js'
import type { ServerLoggerOptions } from '../../lib/logger.js'
import { bodyText, conformance, conformanceCounts, type Conformance } from './openapi-conformance.js'
import { migratedDatabase, testPostgres } from './postgres.js'
import { loadConfig } from '../../lib/config/load.js'
import { projectRoot } from '../../lib/project-root.js'

export interface BuildOptions {
  /** The logger, e.g. a logSink's; none by default. */
  logger?: ServerLoggerOptions | false
  /** Sees every route the app registers: a walk of the routes that does not rely on the app's own plugins. */
  onRoute?: (route: RouteOptions) => void
}

/** A new, empty database on the test run's PostgreSQL server (see testPostgres in ./postgres.ts): the app migrates it as it starts. */
export async function testDatabase (): Promise<string> {
  return (await testPostgres()).createDatabase()
}

/**
 * Which store build() gives the app when the test does not choose: `memory`, or `postgres` (a
 * fresh copy of the migrated template each time) when the test process sets TEST_STORE=postgres,
 * or the same through a transaction-pooling pgbouncer with TEST_STORE=pgbouncer. The collection
 * suites run with each (test/helpers/collection-suites.ts): every store makes the same promises.
 */
async function storeEnv (env: Record<string, string>): Promise<Record<string, string>> {
  const store = process.env.TEST_STORE
  if ((store !== 'postgres' && store !== 'pgbouncer') || env.DATABASE_URL !== undefined || env.STORE === 'memory') return env
  if (store === 'postgres') return { ...env, DATABASE_URL: await migratedDatabase() }
  const { pooledDatabase } = await import('./pgbouncer.js')
  return { DATABASE_POOLER: 'transaction', ...env, DATABASE_URL: await pooledDatabase() }
}

/**
 * Settings every test app and server gets unless the test sets them: no load shedding on event-loop
 * delay, which a test process starved of CPU by its neighbours would see as overload
 * (test/plugins/edge/under-pressure.test.ts sets its own thresholds); the metrics listener on any free
 * port, as test processes run side by side.
 */
const TEST_ENV = { PRESSURE_MAX_EVENT_LOOP_DELAY: '0', METRICS_PORT: '0' }

/** The document of each app that build() made, as GET /openapi.json serves it (even while overloaded). */
const documents = new WeakMap<FastifyInstance, () => unknown>()

/**
 * Builds the whole service in-process for `app.inject`. The settings come only from `env`
 * (not from the shell running the tests), so every test sees the documented defaults.
 * Every response `inject` answers is checked against the server's own OpenAPI document.
 */
export async function build (t: Test, env: Record<string, string> = {}, { logger = false, onRoute }: BuildOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig(await storeEnv({ ...TEST_ENV, ...env }))
  const server = Fastify(appServerOptions(config, { logger }))
  if (onRoute !== undefined) server.addHook('onRoute', onRoute)
  // The context of GET /openapi.json, whose `swagger()` builds the document the route serves.
  server.addHook('onRoute', function (route) { if (route.url === '/openapi.json') documents.set(server, () => this.swagger()) })
  await server.register(app, { config })
  await server.ready()
  t.teardown(() => server.close())
  await conformToDocument(t, server)
  return server
}

/** The conformance checker of a document, by its text: the same settings give the same document. */
const checkers = new Map<string, Conformance>()

/** The checker of the document a server serves at /openapi.json. */
export async function documentConformance (server: FastifyInstance): Promise<Conformance> {
  const document = documents.get(server)
  if (document === undefined) throw new Error('documentConformance: a server made by build()')
  const text = JSON.stringify(document())
  let checker = checkers.get(text)
  if (checker === undefined) checkers.set(text, checker = conformance(JSON.parse(text)))
  return checker
}

const uncheckedInjects = new WeakMap<FastifyInstance, (opts: InjectOptions) => Promise<LightMyRequestResponse>>()

/** A built app's own `inject`, for a test that checks each answer against the document itself. */
export function uncheckedInject (server: FastifyInstance): (opts: InjectOptions) => Promise<LightMyRequestResponse> {
  const inject = uncheckedInjects.get(server)
  if (inject === undefined) throw new Error('uncheckedInject: a server made by build()')
  return inject
}

/**
 * Check 4a of the document: every response the tests receive through `server.inject` is validated
 * against the document's schema for its status and media type; a mismatch fails the test.
 * Requests that are no operation of the document (the catch-all page, unknown paths) are counted.
 */
async function conformToDocument (t: Test, server: FastifyInstance): Promise<void> {
  const checker = await documentConformance(server)
  const inject = server.inject.bind(server) as (opts: InjectOptions) => Promise<LightMyRequestResponse>
  uncheckedInjects.set(server, inject)
  const checked = async (opts: InjectOptions | string) => {
    const request = typeof opts === 'string' ? { url: opts } : opts
    const res = await inject(request)
    // The URL as the server saw it: light-my-request resolves dot segments (`/a/%2e%2e/b` is `/b`).
    const url = res.raw.req.url ?? '/'
    const received = { statusCode: res.statusCode, headers: res.headers, body: bodyText(res.headers, res.rawPayload) }
    const mismatches = checker.check(String(request.method ?? 'GET').toUpperCase(), url, received)
    if (mismatches === undefined) {
      conformanceCounts.undescribed++
    } else if (mismatches.length === 0) {
      conformanceCounts.validated++
    } else {
      conformanceCounts.mismatched++
      t.fail(`${request.method ?? 'GET'} ${url} → ${res.statusCode} does not match the OpenAPI document`, { mismatches, body: res.body.slice(0, 500) })
    }
    return res
  }
  server.inject = checked as FastifyInstance['inject']
}

/** One endpoint of the app: a method of a URL, and the route options that registered it. */
export interface WalkedEndpoint {
  method: string
  url: string
  route: RouteOptions
}

/**
 * Builds the whole app like build() and walks its routes with a hook of the test's own, as they
 * register: the endpoints a description of the API must hold, found without the app's plugins.
 * Left out, as docs/contract.md (The description page) and the @fastify/swagger convention say: HEAD, and `schema.hide`.
 */
export async function walkRoutes (t: Test, env: Record<string, string> = {}, logger: BuildOptions['logger'] = false) {
  const routes: RouteOptions[] = []
  const server = await build(t, env, { logger, onRoute: (route) => { routes.push(route) } })
  const endpoints: WalkedEndpoint[] = routes
    .filter((route) => route.schema?.hide !== true)
    .flatMap((route) => [route.method].flat()
      .filter((method) => method !== 'HEAD')
      .map((method) => ({ method, url: route.url, route })))
  return { server, endpoints }
}

/**
 * The shared plugins of plugins/ without the endpoint groups, plus routes of the test's own:
 * for testing a plugin through routes made to exercise it.
 */
export async function buildPlugins (
  t: Test,
  routes: (server: FastifyInstance) => void,
  env: Record<string, string> = {},
  { logger = false, ...serverOptions }: Omit<FastifyServerOptions, 'logger'> & Pick<BuildOptions, 'logger'> = {}
): Promise<FastifyInstance> {
  const config = loadConfig({ ...TEST_ENV, ...env })
  const server = Fastify({ ...appServerOptions(config, { logger }), ...serverOptions })
  await plugins(server, { config })
  routes(server)
  await server.ready()
  t.teardown(() => server.close())
  return server
}

/** The server options of the documented defaults, without logs, for tests that build a Fastify app of their own. */
export const defaultServerOptions = appServerOptions(loadConfig({}), { logger: false })

/** A pino destination that keeps every log line, parsed, and the `logger` option (at `level`) that writes to it. */
export function logSink (level = 'info') {
  const entries: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line !== '') entries.push(JSON.parse(line))
      callback()
    }
  })
  return { entries, logger: { ...loggerOptions(loadConfig({})), level, stream } }
}

/** Resolves once `check()` holds, polling; rejects after `ms`. */
export async function until (check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(10)
  }
}

/**
 * Moves `Date.now()` `ms` ahead for the rest of the test: a window that counts time by the clock
 * (a rate limit's) ends without the test waiting for it, and without racing it.
 */
export function advanceClock (t: Test, ms: number): void {
  const now = Date.now
  Date.now = () => now() + ms
  t.teardown(() => { Date.now = now })
}

/** http://127.0.0.1:<port> of a server listening on the loopback. */
export function baseUrl (server: FastifyInstance): string {
  return `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`
}

/** A GET over a socket of its own, the response not yet read. */
export function openStream (url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, resolve).on('error', reject)
  })
}

/** Reads until at least `count` complete lines have arrived, then pauses the response; returns them. */
export function readLines (res: IncomingMessage, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const complete = text.split('\n').slice(0, -1)
      if (complete.length >= count) {
        res.off('data', onData)
        res.pause()
        resolve(complete)
      }
    }
    res.on('data', onData)
  })
}

/** The parsed JSON body of an injected response. */
export function json<T = any> (res: LightMyRequestResponse): T {
  return JSON.parse(res.body) as T
}

/** Asserts the JSON error body (docs/contract.md, Errors) and returns its message. */
export function assertError (t: Test, res: LightMyRequestResponse, statusCode: number, mentions?: string | RegExp): string {
  t.equal(res.statusCode, statusCode, `status ${statusCode}`)
  t.match(res.headers['content-type'], /^application\/json; charset=utf-8$/, 'JSON error')
  const body = json(res)
  t.equal(body.statusCode, statusCode, 'statusCode in the body')
  t.type(body.error, 'string', 'reason phrase in the body')
  t.type(body.message, 'string', 'message in the body')
  if (mentions !== undefined) t.match(body.message, mentions, `message names ${mentions}`)
  return body.message
}

export const serverEntry = path.join(projectRoot, 'dist', 'bundle', 'server.js')

export interface RunningServer {
  child: ChildProcess
  /** http://127.0.0.1:<port> */
  url: string
  /** Every log line the server wrote to stdout so far, parsed. */
  logs: Array<Record<string, unknown>>
  /** Resolves with the first log line (already written or to come) that `matches`. */
  waitForLog: (matches: (entry: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>
}

/**
 * A pipe (a FIFO, as `npm start | head` gives) for a child's stdout, its reader the test's: the
 * child writes to `writeFd`; the test reads `reader`, and can stop reading it (pause: the pipe
 * fills, and the child's writes find no room) or close it (destroy: the reader has gone, and the
 * child's writes fail with EPIPE).
 */
export interface StdoutPipe {
  /** The child's end, open for writing; startServer closes the test's copy once the child has it. */
  writeFd: number
  reader: net.Socket
}

/**
 * The writer's end blocks, as a shell gives it, unless `nonBlocking` (as Node makes a process's
 * stdout of a pipe).
 */
export function stdoutPipe (t: Test, { nonBlocking = false } = {}): StdoutPipe {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'stdout-pipe-'))
  const fifo = path.join(directory, 'stdout')
  execFileSync('mkfifo', [fifo])
  // The reader first, not waiting for a writer; then the writer, which the reader lets open at once.
  const reader = new net.Socket({ fd: fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), readable: true, writable: false })
  const writeFd = fs.openSync(fifo, fs.constants.O_WRONLY | (nonBlocking ? fs.constants.O_NONBLOCK : 0))
  t.teardown(() => {
    reader.destroy()
    fs.rmSync(directory, { recursive: true })
  })
  return { writeFd, reader }
}

/** The service's log destination on a pipe whose writer's end does not block (as Node makes stdout), and what its reader has read. */
export function pipeDestination (t: Test) {
  const { writeFd, reader } = stdoutPipe(t, { nonBlocking: true })
  t.teardown(() => fs.closeSync(writeFd))
  let received = ''
  reader.setEncoding('utf8')
  reader.on('data', (chunk: string) => { received += chunk })
  return { destination: new LogDestination(writeFd), reader, received: () => received }
}

/**
 * Starts the production entry point (`node dist/bundle/server.js`, built by `npm run test:system`; or `entry`)
 * on a free port and resolves once it listens. The process is killed when the test ends, if still running.
 * Its stdout, where the logs are read, is a pipe of its own, or `stdout`'s.
 */
export async function startServer (t: Test, env: Record<string, string> = {}, { cwd = process.cwd(), entry = serverEntry, prefix = [] as string[], stdout = undefined as StdoutPipe | undefined } = {}): Promise<RunningServer> {
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`)
  // `prefix`: a command that runs Node, e.g. a shell that sets a ulimit first.
  const [command = process.execPath, ...args] = [...prefix, process.execPath, entry]
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...TEST_ENV, ...env },
    stdio: ['ignore', stdout?.writeFd ?? 'pipe', 'inherit']
  })
  // The child's alone: its reader sees the end of the pipe when the child has exited.
  if (stdout !== undefined) fs.closeSync(stdout.writeFd)
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })

  const logs: Array<Record<string, unknown>> = []
  const lines = createInterface({ input: stdout?.reader ?? child.stdout! })
  lines.on('line', (line) => logs.push(JSON.parse(line) as Record<string, unknown>))
  const waitForLog = (matches: (entry: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const found = logs.find(matches)
      if (found !== undefined) return resolve(found)
      const onLine = () => {
        const entry = logs.at(-1)!
        if (!matches(entry)) return
        lines.off('line', onLine)
        resolve(entry)
      }
      lines.on('line', onLine)
      exited.then((code) => reject(new Error(`server exited with ${code} before the log line came`)), reject)
    })
  const listening = await waitForLog((entry) => String(entry.msg).startsWith('Server listening at '))
  const url = /(http:\/\/127\.0\.0\.1:\d+)$/.exec(String(listening.msg))![1] as string
  return { child, url, logs, waitForLog, exited }
}

/** A response read to its end: its body, and whether it ended properly (`complete`) or was cut. */
export function readBody (res: IncomingMessage): Promise<{ body: string, complete: boolean }> {
  return new Promise((resolve) => {
    let body = ''
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => { body += chunk })
    res.on('error', () => {})
    res.on('close', () => resolve({ body, complete: res.complete }))
  })
}
