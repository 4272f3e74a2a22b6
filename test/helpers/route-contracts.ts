// The statuses and the body limit of each route, and who gave each: docs/route-contracts.md,
// written by `npm run request-path` with docs/request-path.md and held by the same test. A route
// declares its own statuses; plugins add the others from its options in onRoute hooks (plugins/README.md):
// the service is built with every onRoute hook watched, and what each hook changed is written down.
import path from 'node:path'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import app, { serverOptions } from '../../app.js'
import { loadConfig } from '../../lib/config/load.js'
import { projectRoot } from '../../lib/project-root.js'
import { CLIENT_SERVER_ENV } from '../../scripts/client/codegen.js'
import { Locations, describeFile } from './function-locations.js'

export const CONTRACTS_DOCUMENT = path.join(projectRoot, 'docs', 'route-contracts.md')

/** The settings of the OpenAPI document (scripts/client/generate.ts), the metrics' listener on a port of its own. */
const DOCUMENT_ENV: Readonly<Record<string, string>> = { ...CLIENT_SERVER_ENV, METRICS_PORT: '0' }
/** Settings off by default that add statuses: their additions are listed apart. */
const MORE_ENV: Readonly<Record<string, string>> = { RATE_LIMIT_MAX: '100' }

type OnRoute = (this: FastifyInstance, route: RouteOptions) => void

/** What one onRoute hook did to one route: a status added, or the schema of one the route declared replaced. */
interface Change { status: string, replaced: boolean, hook: OnRoute }

interface Watched {
  method: string
  url: string
  registeredIn: string
  own: string[]
  changes: Change[]
  route: RouteOptions
  bodyLimitBy?: OnRoute
}

export interface RouteContract {
  /** `POST /users` */
  route: string
  /** The file that called the method that registered the route (`fastify.post`), a package's name for a dependency's route. */
  registeredIn: string
  /** The statuses of the route's own options, before any onRoute hook. */
  own: string[]
  /** By the file of the onRoute hook: the statuses it added, a replaced schema as `415 (schema replaced)`. */
  added: Array<[file: string, statuses: string[]]>
  /** Statuses added only with MORE_ENV, by the file of the hook. */
  more: Array<[file: string, statuses: string[]]>
  bodyLimit: number
  /** The file of the hook that set the body limit, or `the route` for a limit of its own. */
  bodyLimitBy: string
}

export interface RouteContracts {
  /** The onRoute hooks of the service in the order they run, by file, with what each adds to the contracts. */
  hooks: Array<[file: string, adds: string]>
  routes: RouteContract[]
  bodyLimitSetting: number
}

const HERE = describeFile(import.meta.url)

/** The project file or package of a stack frame's location, undefined for Node's own. */
function frameFile (line: string): string | undefined {
  const location = /\((.+):\d+:\d+\)$/.exec(line)?.[1] ?? /^\s*at (?:async )?(.+):\d+:\d+$/.exec(line)?.[1]
  return location === undefined || location.startsWith('node:') ? undefined : describeFile(location)
}

/**
 * The file that registered a route, from the stack of its first onRoute hook: the first frame
 * outside Fastify and this file, which is the caller of `fastify.get`, `.post`, `.route`…
 */
export function registeringFile (stack: string): string {
  for (const line of stack.split('\n').slice(1)) {
    const file = frameFile(line)
    if (file !== undefined && file !== 'fastify' && file !== HERE) return file
  }
  return '(unknown)'
}

const statusesOf = (route: RouteOptions) => Object.keys((route.schema?.response ?? {}) as object)

/** The service built with `env`, every onRoute hook watched: what each did to each route. */
async function watch (env: Readonly<Record<string, string>>): Promise<{ watched: Watched[], hooks: OnRoute[], bodyLimitSetting: number }> {
  const config = loadConfig(env)
  const server = Fastify(serverOptions(config, { logger: false }))
  const byRoute = new Map<RouteOptions, Watched>()
  const hooks: OnRoute[] = []
  // First of every route's onRoute hooks: the route as its file wrote it, and who registered it.
  server.addHook('onRoute', function recordRoute (route) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 64
    const { stack = '' } = new Error('registered')
    Error.stackTraceLimit = limit
    byRoute.set(route, { method: [route.method].flat().join(','), url: route.url, registeredIn: registeringFile(stack), own: statusesOf(route), changes: [], route })
  })
  // The instances of the plugins inherit this addHook (Fastify makes each with Object.create).
  const addHook = server.addHook
  const watchedAddHook = function (this: FastifyInstance, name: string, hook: OnRoute) {
    if (name !== 'onRoute') return Reflect.apply(addHook, this, [name, hook])
    hooks.push(hook)
    return Reflect.apply(addHook, this, [name, function watched (this: FastifyInstance, route: RouteOptions) {
      const before = { ...(route.schema?.response ?? {}) as Record<string, unknown> }
      const bodyLimit = route.bodyLimit
      hook.call(this, route)
      const record = byRoute.get(route) as Watched
      for (const [status, schema] of Object.entries((route.schema?.response ?? {}) as Record<string, unknown>)) {
        if (before[status] !== schema) record.changes.push({ status, replaced: before[status] !== undefined, hook })
      }
      if (route.bodyLimit !== bodyLimit) record.bodyLimitBy = hook
    }])
  }
  Object.assign(server, { addHook: watchedAddHook })
  await server.register(app, { config })
  await server.ready()
  await server.close()
  const watched = [...byRoute.values()]
  // Fastify's HEAD route of a GET route: the same options, the same contract.
  const gets = new Set(watched.filter(({ method }) => method === 'GET').map(({ url }) => url))
  return { watched: watched.filter(({ method, url }) => !(method === 'HEAD' && gets.has(url))), hooks, bodyLimitSetting: config.BODY_LIMIT }
}

const byStatus = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })

/** The changes by the file of their hook, in the order the hooks ran. */
async function byFile (changes: readonly Change[], files: Map<OnRoute, string>): Promise<Array<[string, string[]]>> {
  const grouped = new Map<string, string[]>()
  for (const { status, replaced, hook } of changes) {
    const file = files.get(hook) as string
    grouped.set(file, [...grouped.get(file) ?? [], replaced ? `${status} (schema replaced)` : status])
  }
  return [...grouped].map(([file, statuses]) => [file, statuses.sort(byStatus)])
}

/** The contract of every route as the service builds it with the OpenAPI document's settings, and what MORE_ENV adds. */
export async function routeContracts (): Promise<RouteContracts> {
  const base = await watch(DOCUMENT_ENV)
  const more = await watch({ ...DOCUMENT_ENV, ...MORE_ENV })
  const locations = new Locations()
  await locations.open()
  try {
    const files = new Map<OnRoute, string>()
    for (const hook of [...base.hooks, ...more.hooks]) files.set(hook, await locations.of(hook))
    const key = ({ method, url }: Watched) => `${method} ${url}`
    const moreByRoute = new Map(more.watched.map((watched) => [key(watched), watched]))
    const routes: RouteContract[] = []
    for (const watched of base.watched.sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
      const statuses = new Set(statusesOf(watched.route))
      const extra = (moreByRoute.get(key(watched))?.changes ?? []).filter(({ status, replaced }) => !replaced && !statuses.has(status))
      routes.push({
        route: key(watched),
        registeredIn: watched.registeredIn,
        own: watched.own.sort(byStatus),
        added: await byFile(watched.changes, files),
        more: await byFile(extra, files),
        bodyLimit: watched.route.bodyLimit as number,
        bodyLimitBy: watched.bodyLimitBy === undefined ? 'the route' : files.get(watched.bodyLimitBy) as string
      })
    }
    const hookFiles = [...new Set(base.hooks.map((hook) => files.get(hook) as string))]
    const hooks = hookFiles.map((file): [string, string] => {
      const counts = new Map<string, number>()
      for (const { added } of routes) {
        for (const status of added.find(([by]) => by === file)?.[1] ?? []) counts.set(status, (counts.get(status) ?? 0) + 1)
      }
      const limits = routes.filter(({ bodyLimitBy }) => bodyLimitBy === file).length
      const adds = [...[...counts].sort(([a], [b]) => byStatus(a, b)).map(([status, count]) => `${status} to ${count}`), ...(limits > 0 ? [`the body limit of ${limits}`] : [])]
      return [file, adds.length === 0 ? 'nothing (reads the route)' : adds.join(', ')]
    })
    return { hooks, routes, bodyLimitSetting: base.bodyLimitSetting }
  } finally {
    locations.close()
  }
}

const cell = (groups: ReadonlyArray<[string, string[]]>) => groups.length === 0 ? '—' : groups.map(([file, statuses]) => `${file}: ${statuses.join(', ')}`).join('; ')

/** Why a body limit is what it is: what Fastify reads of a body (plugins/config.ts, lib/body-limit.ts). */
function bodyLimitCell ({ bodyLimit, bodyLimitBy }: RouteContract, setting: number): string {
  const reason = bodyLimitBy === 'the route' ? 'its own' : bodyLimit === 0 ? 'takes no body' : bodyLimit === setting ? 'BODY_LIMIT' : 'its body schema\'s longest body'
  return `${bodyLimit} (${reason}; ${bodyLimitBy})`
}

/** docs/route-contracts.md from the contracts. */
export function renderRouteContracts ({ hooks, routes, bodyLimitSetting }: RouteContracts): string {
  return [
    '# The routes\' contracts',
    '',
    'What each route answers, and where each status comes from. A route declares the statuses its handler',
    'answers (`response` in its options); the plugins add the ones they answer for it, from its options,',
    'in onRoute hooks ([routes/README.md](../routes/README.md), "Its statuses"), and set its body limit.',
    'The OpenAPI document shows the sum; this page shows the parts. The service as the OpenAPI document is',
    `made (API_TOKENS set, the memory store); "with ${Object.keys(MORE_ENV).join(', ')}" lists what that setting adds.`,
    'A status the route declares is its own even where a plugin would add it too. Every route is',
    'registered by a file of routes/ (or a plugin, or a package): no module of lib/ registers one. A GET',
    'route\'s HEAD route has its contract.',
    '',
    'Generated by `npm run request-path`, with [request-path.md](request-path.md); test/request-path.test.ts',
    'fails while this file differs from the app.',
    '',
    '## The onRoute hooks, in the order they run',
    '',
    '| hooks in | add (a status to how many routes) |',
    '|---|---|',
    ...hooks.map(([file, adds]) => `| ${file} | ${adds} |`),
    '',
    '## Routes',
    '',
    `Body limits in bytes (BODY_LIMIT is ${bodyLimitSetting}).`,
    '',
    `| route | registered in | its own statuses | added by onRoute hooks | with ${Object.keys(MORE_ENV).join(', ')} | body limit |`,
    '|---|---|---|---|---|---|',
    ...routes.map((contract) => `| \`${contract.route}\` | ${contract.registeredIn} | ${contract.own.join(', ') || '—'} | ${cell(contract.added)} | ${cell(contract.more)} | ${bodyLimitCell(contract, bodyLimitSetting)} |`),
    ''
  ].join('\n')
}

/** docs/route-contracts.md as the app is now. */
export async function routeContractsDocument (): Promise<string> {
  return renderRouteContracts(await routeContracts())
}
