import fp from 'fastify-plugin'
import { connectionLimit, processOpenFileLimit } from '../lib/connections.js'

/** The most often a refused connection is logged: a flood of them is one line per interval. */
const DROP_LOG_INTERVAL_MS = 10_000

/**
 * A cap on client connections (MAX_CONNECTIONS, else the descriptor limit less a reserve): past it
 * node:http closes each new connection at once, and the connections the server has keep being
 * answered. Without it, a few thousand idle connections took every descriptor, and the process
 * ended on the next file it had to open. Refusals are counted and logged at most every 10 s.
 */
export default fp(async function connections (fastify) {
  const limit = connectionLimit(fastify.config.MAX_CONNECTIONS, processOpenFileLimit())
  const server = fastify.server
  server.maxConnections = limit
  let dropped = 0
  let loggedAt = -Infinity
  server.on('drop', () => {
    dropped++
    const now = Date.now()
    if (now - loggedAt < DROP_LOG_INTERVAL_MS) return
    fastify.log.warn({ limit, dropped }, 'connection refused: the server has as many as it may keep')
    loggedAt = now
    dropped = 0
  })
  fastify.log.debug({ limit }, 'client connections capped')
}, { name: 'connections', dependencies: ['config'] })
