// The service as the container runs it (through server.ts): .env and the settings, the app, listen,
// and a close with grace on SIGTERM. Or, as a release step, the database's migrations alone.
import Fastify, { type FastifyBaseLogger } from 'fastify'
import closeWithGrace from 'close-with-grace'
import app, { serverOptions } from './app.js'
import { onCloseSignals } from './lib/close-signals.js'
import { loadEnvFile } from './lib/config/env-file.js'
import { listenProblem, type Listener } from './lib/config/listen-problem.js'
import { InvalidConfiguration, loadConfig, storeChoice } from './lib/config/load.js'
import type { Config } from './lib/config/schema.js'
import { warnUnknownSettings } from './lib/config/unknown-settings.js'
import { stdoutDestination } from './lib/log-destination.js'
import { SUPPORTED_NODE, nodeWarning } from './lib/package-info.js'
import { startTracing } from './lib/tracing.js'

/** The signals of a close: docker stop's and Kubernetes' SIGTERM, a terminal's SIGINT (Ctrl-C). */
const CLOSE_SIGNALS = ['SIGINT', 'SIGTERM'] as const

/**
 * `.env`, the settings and the server (its logger): every refused setting printed, a line each, and
 * the process ended, as anything else that stops it here, in one line: never an uncaught error,
 * which would print the (bundled) source line it came from.
 */
function settings (): { config: Config, server: ReturnType<typeof Fastify> } {
  try {
    const fromFile = loadEnvFile()
    const config = loadConfig()
    // With OTEL_EXPORTER_OTLP_ENDPOINT (here or in .env): before the app, which loads pg.
    startTracing()
    const server = Fastify(serverOptions(config))
    // A typo (DATABSE_URL) would quietly leave the setting it meant at its default.
    warnUnknownSettings(server.log, fromFile, Object.keys(process.env))
    const node = nodeWarning()
    if (node !== undefined) server.log.warn({ node: process.versions.node, supported: SUPPORTED_NODE }, node)
    server.log.info({ store: config.STORE }, `store: ${storeChoice(config)}`)
    return { config, server }
  } catch (err) {
    refuse(err instanceof InvalidConfiguration ? err.problems : [String((err as Error).message ?? err).split('\n')[0]!])
  }
}

/** Ends the process for settings it cannot run with, each named on a line of its own. */
function refuse (problems: readonly string[]): never {
  for (const problem of problems) console.error(`Invalid configuration: ${problem}`)
  process.exit(1)
}

/** Ends the process after a failure, its reason on one log line. */
function fail (log: FastifyBaseLogger, what: string, err: unknown): never {
  log.fatal({ err }, `${what}: ${(err as Error).message}`)
  process.exit(1)
}

/**
 * `server.js migrate`: applies the migrations (DATABASE_MIGRATION_URL, else DATABASE_URL), whatever
 * MIGRATE_ON_START says, and ends: exit 0 once the database is at the latest migration, 1 with the
 * reason otherwise. A release step runs it before the new replicas start (a Kubernetes init
 * container, a CI job), and they run with MIGRATE_ON_START=false.
 */
export async function migrate (): Promise<void> {
  const { config, server } = settings()
  try {
    // Loaded here: `server.js` alone loads no database driver.
    const { migrateDatabase } = await import('./lib/postgres/migrations.js')
    const version = await migrateDatabase(config, server.log)
    server.log.info({ version }, 'database migrated')
  } catch (err) {
    fail(server.log, 'could not migrate', err)
  }
}

/** Reads the settings, builds the app and listens; exits the process if it cannot start. */
export async function start (): Promise<void> {
  const { config, server } = settings()

  // SIGTERM (docker stop, which kills 10 s later) or SIGINT: drain and close (plugins/shutdown.ts)
  // within SHUTDOWN_GRACE, exit 0; what still runs then is cut, exit 1. The close's last log lines
  // are part of it: a reader of stdout that is behind gets them, one that has stopped reading keeps
  // the close waiting until the grace cuts it (lib/log-destination.ts). A second SIGINT or SIGTERM
  // exits at once, unless it is the first one's echo (lib/close-signals.ts: npm start's Ctrl-C).
  let closing = false
  const closer = closeWithGrace({ delay: config.SHUTDOWN_GRACE, logger: server.log, skip: [...CLOSE_SIGNALS] }, async ({ signal, err, manual }) => {
    closing = true
    if (err !== undefined) server.log.error({ err }, 'closing after an uncaught error')
    else if (manual !== true) server.log.info({ signal }, 'closing: finishing in-flight requests')
    await server.close()
    await stdoutDestination().flushed()
  })
  const force = (signal: string) => {
    server.log.error(`second ${signal}, exiting`)
    process.exit(1)
  }
  onCloseSignals(CLOSE_SIGNALS, {
    close (signal) {
      if (closing) return force(signal)
      server.log.info({ signal }, 'closing: finishing in-flight requests')
      closer.close()
    },
    force
  })

  // A host or port that cannot be listened on is a setting to change, said as a refused setting
  // is: the metrics listener opens when the app is ready (plugins/edge/metrics.ts), the API's after.
  const metrics: Listener = {
    host: config.METRICS_HOST,
    port: config.METRICS_PORT,
    hostSetting: process.env.METRICS_HOST === undefined ? 'HOST' : 'METRICS_HOST',
    portSetting: 'METRICS_PORT'
  }
  const api: Listener = { host: config.HOST, port: config.PORT, hostSetting: 'HOST', portSetting: 'PORT' }
  let listener = metrics
  try {
    await server.register(app, { config })
    await server.ready()
    listener = api
    await server.listen({ host: config.HOST, port: config.PORT })
  } catch (err) {
    const problem = listenProblem(err, listener)
    if (problem !== undefined) refuse([problem])
    // E.g. the database cannot be reached: the message says why.
    fail(server.log, 'could not start', err)
  }
}
