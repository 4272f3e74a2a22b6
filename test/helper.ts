import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import autoload from '@fastify/autoload'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import app, { options } from '../app.js'
import { loadConfig, projectRoot } from '../plugins/config.js'

/**
 * Builds the whole service in-process for `app.inject`. The settings come only from `env`
 * (not from the shell running the tests), so every test sees the documented defaults.
 */
export async function build (t: Test, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const server = Fastify({ ...options, logger: false })
  await server.register(app, { config: loadConfig(env) })
  await server.ready()
  t.teardown(() => server.close())
  return server
}

/**
 * The shared plugins of plugins/ without the endpoint groups, plus routes of the test's own:
 * for testing a plugin through routes made to exercise it.
 */
export async function buildPlugins (
  t: Test,
  routes: (server: FastifyInstance) => void,
  env: Record<string, string> = {},
  serverOptions: FastifyServerOptions = {}
): Promise<FastifyInstance> {
  const server = Fastify({ ...options, logger: false, ...serverOptions })
  await server.register(autoload, { dir: path.join(projectRoot, 'plugins'), options: { config: loadConfig(env) } })
  routes(server)
  await server.ready()
  t.teardown(() => server.close())
  return server
}

/** The parsed JSON body of an injected response. */
export function json<T = any> (res: LightMyRequestResponse): T {
  return JSON.parse(res.body) as T
}

/** Asserts the JSON error body of DECISIONS §1 and returns its message. */
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

export const serverEntry = path.join(projectRoot, 'dist', 'server.js')

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
 * Starts the production entry point (`node dist/server.js`, built by `npm test`) on a free port
 * and resolves once it listens. The process is killed when the test ends, if still running.
 */
export async function startServer (t: Test, env: Record<string, string> = {}): Promise<RunningServer> {
  if (!fs.existsSync(serverEntry)) throw new Error(`${serverEntry} is missing: run \`npm run build\` first`)
  const child = spawn(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })

  const logs: Array<Record<string, unknown>> = []
  const lines = createInterface({ input: child.stdout! })
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
