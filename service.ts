// The service as the container runs it (through server.ts): .env and the settings, the app, listen,
// and a close with grace on SIGTERM.
import Fastify from 'fastify'
import closeWithGrace from 'close-with-grace'
import app, { serverOptions } from './app.js'
import { InvalidConfiguration, loadConfig, loadEnvFile, warnUnknownSettings, type Config } from './lib/config.js'
import { startTracing } from './lib/tracing.js'

/** Reads the settings, builds the app and listens; exits the process if it cannot start. */
export async function start (): Promise<void> {
  let config: Config
  let server: ReturnType<typeof Fastify>
  let fromFile: string[]
  try {
    fromFile = loadEnvFile()
    config = loadConfig()
    // With OTEL_EXPORTER_OTLP_ENDPOINT (here or in .env): before the app, which loads pg.
    startTracing()
    server = Fastify(serverOptions(config))
  } catch (err) {
    // Every refused setting, a line each; anything else that stops the start here, in one line:
    // never an uncaught error, which would print the (bundled) source line it came from.
    const lines = err instanceof InvalidConfiguration ? err.problems : [String((err as Error).message ?? err).split('\n')[0]]
    for (const line of lines) console.error(`Invalid configuration: ${line}`)
    process.exit(1)
  }

  // A typo in .env (DATABSE_URL) would quietly leave the setting it meant at its default.
  warnUnknownSettings(server.log, fromFile)

  // SIGTERM (docker stop, which kills 10 s later) or SIGINT: drain and close (plugins/shutdown.ts)
  // within SHUTDOWN_GRACE, exit 0; what still runs then is cut, exit 1.
  closeWithGrace({ delay: config.SHUTDOWN_GRACE, logger: server.log }, async ({ signal, err }) => {
    if (err !== undefined) server.log.error({ err }, 'closing after an uncaught error')
    else server.log.info({ signal }, 'closing: finishing in-flight requests')
    await server.close()
  })

  try {
    await server.register(app, { config })
    await server.listen({ host: config.HOST, port: config.PORT })
  } catch (err) {
    // E.g. the database cannot be reached, or the port is taken: the message says which.
    server.log.fatal({ err }, `could not start: ${(err as Error).message}`)
    process.exit(1)
  }
}
