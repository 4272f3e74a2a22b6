// The hooks each route runs, in order, with the file that defines each: docs/request-path.md.
// `npm run request-path` writes it; test/request-path.test.ts fails while it is out of date, so a
// change to what a request passes through is made on purpose and read in review.
import fs from 'node:fs'
import path from 'node:path'
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app.js'
import { loadConfig } from '../../lib/config/load.js'
import { projectRoot } from '../../lib/project-root.js'

export const DOCUMENT = path.join(projectRoot, 'docs', 'request-path.md')

/** The phases of a request in the order Fastify runs them (onError/onTimeout/onRequestAbort when they happen). */
const PHASES = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'] as const

/** A route as find-my-way holds it: its store is Fastify's route context, with the hooks it runs. */
interface RouterRoute {
  method: string
  path: string
  store: Record<string, unknown> & { handler: Function }
}

/** Where functions are defined, by V8's own record of each function (the inspector protocol). */
class Locations {
  readonly #session = new Session()
  readonly #scripts = new Map<string, string>()

  async open () {
    this.#session.connect()
    this.#session.on('Debugger.scriptParsed', ({ params }) => { this.#scripts.set(params.scriptId, params.url) })
    await this.#session.post('Debugger.enable')
  }

  /** The file of a function (of its target, for a bound one): a project path, or the package of a dependency. */
  async of (fn: Function): Promise<string> {
    const key = `__requestPathFunction${Math.random().toString(36).slice(2)}`
    Object.assign(globalThis, { [key]: fn })
    try {
      const { result } = await this.#session.post('Runtime.evaluate', { expression: `globalThis.${key}` })
      let objectId = result.objectId as string
      for (;;) {
        const { internalProperties = [] } = await this.#session.post('Runtime.getProperties', { objectId, ownProperties: true })
        const internal = (name: string) => internalProperties.find((property) => property.name === name)?.value
        const target = internal('[[TargetFunction]]')
        if (target?.objectId !== undefined) { objectId = target.objectId; continue }
        const location = internal('[[FunctionLocation]]')?.value as { scriptId: string } | undefined
        const url = location === undefined ? undefined : this.#scripts.get(location.scriptId)
        return url === undefined ? '(native)' : describeFile(url)
      }
    } finally {
      Reflect.deleteProperty(globalThis, key)
    }
  }

  close () {
    this.#session.disconnect()
  }
}

/** A script URL as the listing names it: `plugins/not-found.ts`, or `@fastify/compress` for a dependency. */
function describeFile (url: string): string {
  const file = url.startsWith('file:') ? fileURLToPath(url) : url
  const relative = path.relative(projectRoot, file).split(path.sep).join('/')
  const dependency = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(relative)
  return dependency === null ? relative : (dependency[1] as string)
}

/** The routes of the service with the default settings (the memory store, metrics on), as the router holds them. */
async function routes (): Promise<RouterRoute[]> {
  const config = loadConfig({ METRICS_PORT: '0' })
  const seen: RouterRoute[] = []
  const options = serverOptions(config, { logger: false })
  // printRoutes asks find-my-way for each route's metadata (before it merges the lines of equal
  // routes): the route itself, with Fastify's context of it, is what the listing needs. Fastify
  // passes the option to its router, though its types do not name it.
  const routerOptions = { ...options.routerOptions, buildPrettyMeta: ({ method, path, store }: RouterRoute) => { seen.push({ method, path, store }); return {} } }
  const server = Fastify({ ...options, routerOptions })
  await server.register(app, { config })
  await server.ready()
  server.printRoutes({ includeMeta: true, commonPrefix: false })
  await server.close()
  return seen
}

/** docs/request-path.md as the app is now. */
export async function requestPathDocument (): Promise<string> {
  const locations = new Locations()
  await locations.open()
  try {
    const describe = async (fn: Function) => `\`${fn.name.replace(/^bound /, '') || 'anonymous'}\` (${await locations.of(fn)})`
    const chains = new Map<string, string[]>()
    const rows: string[] = []
    const seen = await routes()
    for (const route of seen.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))) {
      const lines: string[] = []
      for (const phase of PHASES) {
        const hooks = route.store[phase] as Function[] | null | undefined
        if (hooks == null || hooks.length === 0) continue
        lines.push(`- ${phase}: ${(await Promise.all(hooks.map(describe))).join(' → ')}`)
      }
      const chain = lines.join('\n')
      if (!chains.has(chain)) chains.set(chain, [])
      const label = `${String.fromCharCode(65 + [...chains.keys()].indexOf(chain))}`
      chains.get(chain)?.push(`${route.method} ${route.path}`)
      rows.push(`| \`${route.method} ${route.path}\` | ${label} | ${await locations.of(route.store.handler)} |`)
    }
    const hookCount = (chain: string) => (chain.match(/`[^`]+` \(/g) ?? []).length
    return [
      '# The request path',
      '',
      'What a request passes through, route by route: the hooks Fastify runs for it, in order, and the file',
      'that defines each (a package name for a dependency), then the route\'s handler. The service with its',
      'default settings (the memory store, metrics on); other settings add hooks where they say so in',
      '[plugins/README.md](../plugins/README.md) (Basic auth, bearer tokens, CORS origins, tracing).',
      '',
      'Generated by `npm run request-path`; test/request-path.test.ts fails while this file differs from the',
      'app, so a change to the path of a request is made on purpose and shows in review.',
      '',
      '## Hook chains',
      '',
      ...[...chains.entries()].flatMap(([chain, members], index) => [
        `### ${String.fromCharCode(65 + index)}: ${hookCount(chain)} hook calls, ${members.length} routes`,
        '',
        chain,
        ''
      ]),
      '## Routes',
      '',
      '| route | hooks | handler in |',
      '|---|---|---|',
      ...rows,
      ''
    ].join('\n')
  } finally {
    locations.close()
  }
}

if (process.argv[1] !== undefined && import.meta.filename === fs.realpathSync(process.argv[1])) {
  fs.writeFileSync(DOCUMENT, await requestPathDocument())
  console.log(`Wrote ${path.relative(process.cwd(), DOCUMENT)}`)
}
