import fp from 'fastify-plugin'
import { capConnections, connectionLimit, processOpenFileLimit } from '../lib/connections.js'
import { PIPELINE_DEPTH, boundPipelining } from '../lib/pipelining.js'

/**
 * A cap on client connections (MAX_CONNECTIONS, else the descriptor limit less a reserve): past it
 * node:http closes each new connection at once, and the connections the server has keep being
 * answered. Without it, a few thousand idle connections took every descriptor, and the process
 * ended on the next file it had to open. Refusals are counted and logged at most every 10 s.
 * And a bound on pipelining (lib/pipelining.ts): PIPELINE_DEPTH requests of a connection in flight
 * at once; past it the connection closes after their answers. Without it, one connection that
 * pipelined thousands of requests had the service answer them all into memory.
 */
export default fp(async function connections (fastify) {
  const limit = connectionLimit(fastify.config.MAX_CONNECTIONS, processOpenFileLimit())
  capConnections(fastify.server, limit, (dropped) => {
    fastify.log.warn({ limit, dropped }, 'connection refused: the server has as many as it may keep')
  })
  fastify.log.debug({ limit }, 'client connections capped')
  boundPipelining(fastify.server, PIPELINE_DEPTH, (cut) => {
    fastify.log.warn({ depth: PIPELINE_DEPTH, cut }, 'pipelined requests past the depth: the connection closes after the answers in flight')
  })
}, { name: 'connections', dependencies: ['config'] })
