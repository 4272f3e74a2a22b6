// The service as the container runs it (through server.ts): .env and the settings, the app, listen,
// and a close with grace on SIGTERM.
import Fastify from 'fastify'
import closeWithGrace from 'close-with-grace'
import app, { serverOptions } from './app.js'
import { type Config, loadConfig, loadEnvFile } from './lib/config.js'

/** Reads the settings, builds the app and listens; exits the process if it cannot start. */
export async function start (): Promise<void> {
  let config: Config
  try {
    loadEnvFile()
    config = loadConfig()
  } catch (err) {
    console.error(`Invalid configuration: ${(err as Error).message}`)
    process.exit(1)
  }

  const server = Fastify(serverOptions(config))

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
