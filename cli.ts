import { serverOptions } from './app.js'
import { loadConfig } from './lib/config.js'

/**
 * `fastify start` (npm run dev) on the app of server.ts, with the same settings:
 *
 *     fastify start --config dist/cli.js -w -P dist/cli.js
 *
 * Read as fastify-cli's config file (`--config`): where to listen, how long a close may take, the
 * log level. Read as the app: app.ts's plugin, and the server options. fastify-cli has loaded
 * `.env` before it reads this, as server.ts does.
 */
const config = loadConfig()

export { default } from './app.js'
export const address = config.HOST
export const port = config.PORT
export const logLevel = config.LOG_LEVEL
export const closeGraceDelay = config.SHUTDOWN_GRACE
/** The server options; being set, it also stands for `--options`. */
export const options = serverOptions(config)
