import fs from 'node:fs'
import path from 'node:path'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { EnvSchema, type Config } from './schema.js'
import { proxyListProblem, trustsAnyClient } from './trust-proxy.js'

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
  // Every hop trusted, or nearly: any client picks its own address with X-Forwarded-For, and with
  // it its rate limits and failed-login counts (docs/operations.md, Behind nginx).
  const trustProblem = trustsAnyClient(settings.TRUST_PROXY as string)
  if (trustProblem !== undefined) refuse('TRUST_PROXY', trustProblem, false)
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
 * The store `config` uses and which setting chose it, for the line the start logs: a mistyped
 * DATABASE_URL leaves a development service on the memory store, and this line says so.
 */
export function storeChoice (config: Pick<Config, 'STORE' | 'DATABASE_URL'>, env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.STORE !== undefined && env.STORE !== '') return `${config.STORE}, as STORE says`
  return config.STORE === 'postgres'
    ? 'postgres, as DATABASE_URL is set'
    : 'memory, as no DATABASE_URL is set: the data lives in this process, and is lost when it stops'
}
