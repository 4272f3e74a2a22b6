import Fastify from 'fastify'
import closeWithGrace from 'close-with-grace'
import app, { options } from './app.js'
import { loadConfig, trustProxyOption, type Config } from './plugins/config.js'

/** How long SIGTERM waits for in-flight requests before giving up (Docker kills after 10 s). */
const CLOSE_GRACE_MS = 9000

let config: Config
try {
  config = loadConfig()
} catch (err) {
  console.error(`Invalid configuration: ${(err as Error).message}`)
  process.exit(1)
}

const server = Fastify({
  ...options,
  logger: { ...options.logger, level: config.LOG_LEVEL },
  trustProxy: trustProxyOption(config.TRUST_PROXY),
  // Give slow clients a bound; responses (e.g. long streams) are not limited by these.
  requestTimeout: 30_000,
  http: { headersTimeout: 15_000 }
})

closeWithGrace({ delay: CLOSE_GRACE_MS, logger: server.log }, async ({ signal, err }) => {
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
