import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import util from 'node:util'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** The directory holding package.json, both from the sources and from dist/. */
function findProjectRoot (from: string): string {
  let dir = from
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) return from
    dir = parent
  }
  return dir
}

export const projectRoot = findProjectRoot(import.meta.dirname)

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const ENVIRONMENTS = ['development', 'production', 'test'] as const
const STORES = ['memory', 'postgres'] as const
const POOLERS = ['none', 'transaction'] as const

/** One of these words (TypeBox checks a union of literals itself; the API's enums are for Ajv). */
function OneOf<T extends string> (values: readonly T[], options: { default?: T } = {}) {
  return Type.Union(values.map((value) => Type.Literal(value)), options)
}

/**
 * Every setting of the service, read from the environment. Defaults live here
 * and nowhere else; `.env.example` and the README's table document them.
 */
const EnvSchema = Type.Object({
  // A typo (`prod`) must not quietly count as development, with its default credentials.
  NODE_ENV: OneOf(ENVIRONMENTS, { default: 'development' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: OneOf(LOG_LEVELS, { default: 'info' }),
  BODY_LIMIT: Type.Integer({ minimum: 1, default: 1048576 }),
  FILES_DIR: Type.String({ minLength: 1, default: '.' }),
  STATIC_DIR: Type.String({ minLength: 1, default: path.join(projectRoot, 'static') }),
  // A symlink in STATIC_DIR whose target is outside it: served only when this is true.
  STATIC_FOLLOW_SYMLINKS: Type.Boolean({ default: false }),
  // Default: on outside production, off in production (docs/contract.md, The description page).
  DOCS_CATCH_ALL: Type.Optional(Type.Boolean()),
  // The path prefix the reverse proxy serves the API under (/api), or '' for none.
  BASE_PATH: Type.String({ pattern: '^(/[A-Za-z0-9._~!$&\'()*+,;=:@%-]+)*$', default: '' }),
  // Goes inside a quoted string of WWW-Authenticate: no quotes, backslashes or controls.
  AUTH_REALM: Type.String({ pattern: '^[^"\\\\\\u0000-\\u001f\\u007f]+$', default: 'my-realm' }),
  // user:password pairs separated by commas; the user has no colon, neither has a comma.
  BASIC_AUTH_USERS: Type.Optional(Type.String({ pattern: '^[^:,]+:[^,]+(,[^:,]+:[^,]+)*$' })),
  // Bearer tokens (RFC 6750 b64token) separated by commas.
  API_TOKENS: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._~+/-]+=*(,[A-Za-z0-9._~+/-]+=*)*$' })),
  // true, false, a hop count, or comma-separated addresses/CIDR ranges of trusted proxies.
  TRUST_PROXY: Type.String({ pattern: '^(true|false|\\d+|[\\w.:/]+(\\s*,\\s*[\\w.:/]+)*)$', default: 'false' }),
  // Unset: the embedded in-memory store (one process, not durable). Set: PostgreSQL, shared by every replica.
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^$|^postgres(ql)?://' })),
  // Which store, said outright: `memory` is how production is allowed to run without DATABASE_URL.
  // Unset: postgres with DATABASE_URL, memory without it (outside production).
  STORE: Type.Optional(OneOf(STORES)),
  // A role that may change the schema, for the migrations (`server.js migrate`, or at start): the
  // service's own role (DATABASE_URL) then needs only to read and write rows. Unset: DATABASE_URL.
  DATABASE_MIGRATION_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // Apply the migrations when the service starts (with DATABASE_URL). Off when a release step
  // (`npm run migrate`, a Kubernetes Job) applies them before the new replicas start.
  MIGRATE_ON_START: Type.Boolean({ default: true }),
  // What is between the service and PostgreSQL: `none`, or `transaction` for a pooler that hands
  // a server connection to a client for one transaction only (PgBouncer's pool_mode = transaction):
  // then nothing is kept on a connection between transactions (no named prepared statements, no
  // parameters set when connecting: set statement_timeout on the role instead; docs/operations.md).
  DATABASE_POOLER: OneOf(POOLERS, { default: 'none' }),
  // Connections each replica keeps at most.
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  // Milliseconds a query (or taking a connection) may last before the request gets 503.
  DATABASE_STATEMENT_TIMEOUT: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  // Milliseconds start-up keeps retrying an unreachable database before it gives up (exit 1); 0 = one try.
  DATABASE_STARTUP_TIMEOUT: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  // Milliseconds a client may take to send a request's headers, and the whole request (body
  // included); past them it gets 408 and the connection closes. Answers (long streams) are not bounded.
  HEADERS_TIMEOUT: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 15_000 }),
  REQUEST_TIMEOUT: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000 }),
  // Client connections kept at once; past it new ones are closed at once. 0: the open-file limit
  // less a reserve for the service's own descriptors (lib/connections.ts).
  MAX_CONNECTIONS: Type.Integer({ minimum: 0, default: 0 }),
  // Milliseconds after SIGTERM during which requests on open connections are still answered
  // (with Connection: close) while new connections are refused; then idle ones are closed.
  SHUTDOWN_DRAIN: Type.Integer({ minimum: 0, maximum: 600_000, default: 1000 }),
  // Milliseconds after SIGTERM by which the process exits; what is still running then is cut (exit 1).
  SHUTDOWN_GRACE: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 9000 }),
  // Overload (@fastify/under-pressure): above any of these, requests get 503 with Retry-After. 0 = not checked.
  PRESSURE_MAX_EVENT_LOOP_DELAY: Type.Integer({ minimum: 0, default: 1000 }),
  PRESSURE_MAX_EVENT_LOOP_UTILIZATION: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
  PRESSURE_MAX_HEAP_USED_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  PRESSURE_MAX_RSS_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  // Origins allowed to call the API from a browser (CORS), comma-separated, or * for any; '' for none.
  CORS_ORIGINS: Type.String({ pattern: '^(\\*|https?://[^\\s,/]+(\\s*,\\s*https?://[^\\s,/]+)*)?$', default: '' }),
  // Requests per client address per window, on every route; 0 turns the global limit off.
  RATE_LIMIT_MAX: Type.Integer({ minimum: 0, default: 0 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1, default: 60_000 }),
  // Failed authentications per client address and user name per window, after which that user name
  // gets 429 from that address; 0: no limit. AUTH_FAILURE_ADDRESS_LIMIT: the ceiling for an address
  // over every user name (a guesser trying many names), far above one user's mistakes.
  AUTH_FAILURE_LIMIT: Type.Integer({ minimum: 0, default: 10 }),
  AUTH_FAILURE_ADDRESS_LIMIT: Type.Integer({ minimum: 0, default: 100 }),
  AUTH_FAILURE_WINDOW_MS: Type.Integer({ minimum: 1, default: 900_000 }),
  // GET /metrics (Prometheus) and the request metrics behind it, on a listener of its own: no proxy
  // in front of the API can expose it by a path it did not expect. METRICS_HOST: its address (HOST
  // when unset); METRICS_PORT 0: any free port (tests).
  METRICS: Type.Boolean({ default: true }),
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9091 }),
  // Compress responses (gzip, br, deflate) for clients that accept it; off when the proxy compresses.
  COMPRESSION: Type.Boolean({ default: true }),
  // Bench only: GET /colors serves this many generated colours instead of the 59 (0 = the real ones).
  COLORS_SYNTHETIC_COUNT: Type.Integer({ minimum: 0, maximum: 5_000_000, default: 0 })
})

/** The names of every setting. */
export const SETTING_NAMES: readonly string[] = Object.keys(EnvSchema.properties)

export type Config = Omit<Static<typeof EnvSchema>, 'DOCS_CATCH_ALL' | 'STORE' | 'METRICS_HOST'> &
  { DOCS_CATCH_ALL: boolean, STORE: typeof STORES[number], METRICS_HOST: string }

/** Outside production the tutorial's credentials work out of the box; in production they are refused. */
const DEVELOPMENT_USERS = 'servant:server'

/**
 * Settings that are each valid alone but not together, and what production refuses: data that
 * would quietly live in one process's memory, the tutorial's public credentials. `settings` has
 * passed the schema.
 */
function combinationProblems (settings: Record<string, unknown>, refuse: (name: string, what: string, quoted: boolean) => void): void {
  const database = settings.DATABASE_URL !== undefined && settings.DATABASE_URL !== ''
  if ((settings.HEADERS_TIMEOUT as number) > (settings.REQUEST_TIMEOUT as number)) {
    refuse('HEADERS_TIMEOUT', `must not be longer than REQUEST_TIMEOUT (${settings.REQUEST_TIMEOUT as number})`, true)
  }
  if ((settings.SHUTDOWN_DRAIN as number) >= (settings.SHUTDOWN_GRACE as number)) {
    refuse('SHUTDOWN_DRAIN', `must be shorter than SHUTDOWN_GRACE (${settings.SHUTDOWN_GRACE as number}), by which the process is cut`, true)
  }
  if (settings.METRICS === true && settings.METRICS_PORT !== 0 && settings.METRICS_PORT === settings.PORT) {
    refuse('METRICS_PORT', `must differ from PORT (${settings.PORT as number}): the metrics have a listener of their own`, true)
  }
  for (const name of ['FILES_DIR', 'STATIC_DIR'] as const) {
    const problem = directoryProblem(settings[name] as string)
    if (problem !== undefined) refuse(name, problem, false)
  }
  if (settings.STORE === 'postgres' && !database) refuse('STORE', 'postgres needs DATABASE_URL', false)
  if (settings.STORE === 'memory' && database) refuse('STORE', 'memory, but DATABASE_URL is set: unset one of them', false)
  if (settings.NODE_ENV !== 'production') return
  if (settings.STORE === undefined && !database) {
    refuse('DATABASE_URL', 'required in production (or STORE=memory, to keep the data in this process\'s memory, lost when it stops)', false)
  }
  if (typeof settings.BASIC_AUTH_USERS === 'string' && settings.BASIC_AUTH_USERS.split(',').includes(DEVELOPMENT_USERS)) {
    refuse('BASIC_AUTH_USERS', `the example credentials ${DEVELOPMENT_USERS} are refused in production`, false)
  }
  // Every hop trusted: any client picks its own address with X-Forwarded-For, and with it its
  // rate limits and failed-login counts (docs/operations.md, Behind nginx).
  if (settings.TRUST_PROXY === 'true') {
    refuse('TRUST_PROXY', 'true is refused in production, where any client could pick its address in X-Forwarded-For: give the number of proxies in front of the service (1 behind one nginx) or their addresses (10.0.0.0/8)', false)
  }
}

/** What is wrong with a directory setting, or undefined: it must be a directory that exists. */
function directoryProblem (value: string): string | undefined {
  const directory = path.resolve(value)
  try {
    return fs.statSync(directory).isDirectory() ? undefined : `expected a directory: ${directory} is not one`
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return `expected a directory: ${directory} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`
  }
}

/** Settings whose values hold credentials: a message that refuses one does not repeat it. */
const SECRETS = new Set(['BASIC_AUTH_USERS', 'API_TOKENS', 'DATABASE_URL', 'DATABASE_MIGRATION_URL'])

/**
 * A variable's text as the type its schema declares, as Ajv's `coerceTypes` reads it: a number
 * (decimal, or with an exponent), `true` or `false`. Text that is none stays text, and the check
 * refuses it.
 */
function fromText (schema: TSchema, text: string): unknown {
  if (schema.type === 'integer' || schema.type === 'number') {
    return text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text)
  }
  if (schema.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true'
  return text
}

/** What a refused value must be, for the message: the words of a union, else TypeBox's own words. */
function expected (schema: TSchema, message: string): string {
  const words = (schema.anyOf as TSchema[] | undefined)?.map((member) => JSON.stringify(member.const))
  return words === undefined ? message.replace(/^Expected/, 'expected') : `expected one of ${words.join(', ')}`
}

/** The settings refused at start-up, each in a line of its own: `env/PORT: expected integer …, not "70000"`. */
export class InvalidConfiguration extends Error {
  override name = 'InvalidConfiguration'
  readonly problems: readonly string[]
  constructor (problems: readonly string[]) {
    super(problems.join('\n'))
    this.problems = problems
  }
}

/** Names proxy-addr (Fastify's trustProxy) knows for address ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * What is wrong with a TRUST_PROXY list of addresses, or undefined: each entry must be an IPv4 or
 * IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`) or an IPv4 netmask, or
 * one of proxy-addr's names (loopback, linklocal, uniquelocal).
 */
export function proxyListProblem (value: string): string | undefined {
  if (/^(true|false|\d+)$/.test(value)) return undefined
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (PROXY_RANGE_NAMES.has(entry)) continue
    const [address = '', prefix, ...rest] = entry.split('/')
    const version = net.isIP(address)
    const longest = version === 4 ? 32 : 128
    const prefixValid = prefix === undefined ||
      (/^\d+$/.test(prefix) && Number(prefix) <= longest) ||
      (version === 4 && net.isIPv4(prefix))
    if (version === 0 || rest.length > 0 || !prefixValid) {
      const which = entry === value.trim() ? '' : ` (${JSON.stringify(entry)} is none)`
      return `expected true, false, a hop count, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, separated by commas${which}`
    }
  }
  return undefined
}

/**
 * Validates the environment against the schema (TypeBox's Value: no schema compiler at start-up)
 * and returns the typed settings. Throws an InvalidConfiguration that names every offending
 * variable, a line each, and what it must be (`env/PORT: expected integer to be less or equal to
 * 65535, not "70000"`); the value is left out for the credentials.
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const settings: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(EnvSchema.properties)) {
    const text = env[name]
    if (text !== undefined) settings[name] = fromText(schema, text)
  }
  Value.Default(EnvSchema, settings)
  const problems = new Map<string, string>()
  const refuse = (name: string, what: string, quoted = true) => {
    if (problems.has(name)) return
    const value = !quoted || SECRETS.has(name) || env[name] === undefined ? '' : `, not ${JSON.stringify(env[name])}`
    problems.set(name, `env/${name}: ${what}${value}`)
  }
  for (const error of Value.Errors(EnvSchema, settings)) refuse(error.path.slice(1), expected(error.schema, error.message))
  if (typeof settings.TRUST_PROXY === 'string') {
    const problem = proxyListProblem(settings.TRUST_PROXY)
    if (problem !== undefined) refuse('TRUST_PROXY', problem)
  }
  if (problems.size === 0) combinationProblems(settings, refuse)
  if (problems.size > 0) throw new InvalidConfiguration([...problems.values()])
  const config = settings as Config
  config.DOCS_CATCH_ALL ??= config.NODE_ENV !== 'production'
  config.METRICS_HOST ??= config.HOST
  config.FILES_DIR = path.resolve(config.FILES_DIR)
  config.STATIC_DIR = path.resolve(config.STATIC_DIR)
  // `DATABASE_URL=` (e.g. from a compose file's `${DATABASE_URL:-}`) is no database, like no variable.
  if (config.DATABASE_URL === '') delete config.DATABASE_URL
  config.STORE ??= config.DATABASE_URL === undefined ? 'memory' : 'postgres'
  if (config.BASIC_AUTH_USERS === undefined && config.NODE_ENV !== 'production') {
    config.BASIC_AUTH_USERS = DEVELOPMENT_USERS
  }
  return config
}

/**
 * Loads `.env` of the working directory into process.env when there is one, as `fastify start`
 * does: variables already set win over the file. Answers the names the file sets ([] without one).
 */
export function loadEnvFile (): string[] {
  let text: string
  try {
    text = fs.readFileSync('.env', 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  process.loadEnvFile()
  return Object.keys(util.parseEnv(text))
}

/**
 * Variables of other programs that a .env may well hold for the service's process: Node's own,
 * fastify-cli's options (`FASTIFY_*`), the PostgreSQL driver's defaults (`PG*`), OpenTelemetry's.
 */
const OTHERS_VARIABLES = /^(NODE_\w+|UV_THREADPOOL_SIZE|TZ|FASTIFY_\w+|PG[A-Z]+|OTEL_\w+)$/

/** Edit distance between two names (insertions, deletions, substitutions). */
function distance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The names among `names` (a .env file's) that no setting of the service has, each with the
 * setting it most likely meant (a typo: at most a third of the name's letters apart), else none.
 * Such a variable is silently ignored otherwise, and the setting it meant keeps its default.
 */
export function unknownSettings (names: readonly string[]): Array<{ name: string, closest?: string }> {
  const settings = Object.keys(EnvSchema.properties)
  return names.filter((name) => !(name in EnvSchema.properties) && !OTHERS_VARIABLES.test(name)).map((name) => {
    const [closest] = settings
      .map((setting) => ({ setting, apart: distance(name.toUpperCase(), setting) }))
      .filter(({ apart }) => apart <= Math.max(1, Math.floor(name.length / 3)))
      .sort((a, b) => a.apart - b.apart)
    return closest === undefined ? { name } : { name, closest: closest.setting }
  })
}

/** Warns, a line each, of the variables of .env (`names`) that the service does not read. */
export function warnUnknownSettings (log: { warn: (fields: object, msg: string) => void }, names: readonly string[]): void {
  for (const { name, closest } of unknownSettings(names)) {
    log.warn({ variable: name, closest }, `.env sets ${name}, which is no setting of the service: ignored${closest === undefined ? '' : ` (did you mean ${closest}?)`}`)
  }
}

/** Fastify's `trustProxy` option for a TRUST_PROXY value: all, none, the nearest N hops, or these addresses. */
export function trustProxyOption (value: string): boolean | string | ((address: string, hop: number) => boolean) {
  if (value === 'true') return true
  if (value === 'false') return false
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value
}
