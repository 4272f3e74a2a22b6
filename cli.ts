import type { FastifyInstance } from 'fastify'
import app, { loggerOptions, serverOptions, type AppOptions } from './app.js'
import { lazyChildLoggerFactory } from './lib/logger.js'
import { loadEnvFile } from './lib/config/env-file.js'
import { loadConfig } from './lib/config/load.js'
import { warnUnknownSettings } from './lib/config/unknown-settings.js'
import { startTracing } from './lib/tracing.js'

/**
 * `fastify start` (npm run dev) on the app of server.ts, with the same settings:
 *
 *     fastify start --config dist/cli.js -w -P dist/cli.js
 *
 * Read as fastify-cli's config file (`--config`): where to listen, how long a close may take, the
 * log level. Read as the app: app.ts's plugin, and the server options. fastify-cli has loaded
 * `.env` before it reads this; it is read again here (what is set wins), for the names it sets.
 */
const fromFile = loadEnvFile()
const config = loadConfig()
// With OTEL_EXPORTER_OTLP_ENDPOINT: before the app loads pg, and before the server options.
startTracing()

/** The app, after a warning for each variable of .env that the service does not read. */
export default async function devApp (fastify: FastifyInstance, opts: AppOptions) {
  warnUnknownSettings(fastify.log, fromFile)
  await app(fastify, opts)
}
export const address = config.HOST
export const port = config.PORT
export const logLevel = config.LOG_LEVEL
export const closeGraceDelay = config.SHUTDOWN_GRACE
/**
 * The server options; being set, it also stands for `--options`. fastify-cli makes the logger
 * itself, from its `logger` option merged with this one (its level, then ours): a logger instance
 * cannot be given beside it, so the request loggers come from a child factory here (lib/logger.ts).
 */
export const options = { ...serverOptions(config, { logger: false }), logger: loggerOptions(config), childLoggerFactory: lazyChildLoggerFactory }
