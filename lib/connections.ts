import fs from 'node:fs'
import http from 'node:http'
import type { Server } from 'node:net'
import { throttled } from './throttle.js'

/** How often (ms) node:http looks for clients past a listener's headers or request timeout. */
export const TIMEOUT_CHECK_INTERVAL_MS = 500

/**
 * Connections the metrics listener keeps at once (plugins/edge/metrics.ts): a scraper holds one
 * per scrape, a pair of Prometheus servers two; the rest leaves room for an operator's curl and for
 * connections still closing. Nothing else has a reason to connect there.
 */
export const METRICS_CONNECTION_LIMIT = 8

/**
 * Descriptors the service needs for its own work: the database pool (DATABASE_POOL_SIZE), files
 * read per request (/myfile.txt, /static), the logger, the listening sockets, Node's own.
 */
export const SERVICE_DESCRIPTORS = 248

/**
 * Descriptors kept free for everything that is not a client connection of the API: the metrics
 * listener's connections and the service's own. With a descriptor limit L and MAX_CONNECTIONS
 * unset, the API keeps L - RESERVED_DESCRIPTORS connections, so the API's connections, the metrics
 * listener's (METRICS_CONNECTION_LIMIT) and the service's own (SERVICE_DESCRIPTORS) add up to L at
 * most: a flood of either port cannot take a descriptor the other port or the service needs.
 */
export const RESERVED_DESCRIPTORS = SERVICE_DESCRIPTORS + METRICS_CONNECTION_LIMIT

/** The cap when the descriptor limit cannot be read (not Linux): what a default limit of 1024 gives, times ten. */
export const DEFAULT_CONNECTION_LIMIT = 10_000

/** The most often a listener's refused connections are logged: a flood of them is one line per interval. */
export const DROP_LOG_INTERVAL_MS = 10_000

/** The soft limit of open files from /proc/self/limits' text ("Max open files  4096  4096  files"), or undefined. */
export function openFileLimit (limits: string): number | undefined {
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits)?.[1]
  return soft === undefined || soft === 'unlimited' ? undefined : Number(soft)
}

/** This process's soft limit of open files, on Linux; undefined elsewhere. */
export function processOpenFileLimit (): number | undefined {
  try {
    return openFileLimit(fs.readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * How many client connections the server keeps at once: MAX_CONNECTIONS when set (not 0), else
 * the descriptor limit less RESERVED_DESCRIPTORS, so that idle or slow connections can never take
 * the last descriptor the process needs for its own work (at 0 left, even reading its own memory
 * use fails with EMFILE). Below a limit of RESERVED_DESCRIPTORS + 16 the floor of 16 eats into
 * the reserve: such a limit is too small to run the service anyway.
 */
export function connectionLimit (configured: number, fileLimit: number | undefined): number {
  if (configured > 0) return configured
  if (fileLimit === undefined) return DEFAULT_CONNECTION_LIMIT
  return Math.max(16, fileLimit - RESERVED_DESCRIPTORS)
}

/**
 * Caps `server` at `limit` connections: past it Node closes each new connection as soon as it is
 * accepted, and the connections the server has keep being served. `logDropped` is told how many
 * were refused, at most once every DROP_LOG_INTERVAL_MS: the first refusal at once, then those of
 * each interval with the next refusal after it.
 */
export function capConnections (server: Server, limit: number, logDropped: (dropped: number) => void): void {
  server.maxConnections = limit
  server.on('drop', throttled(DROP_LOG_INTERVAL_MS, logDropped))
}

/** How much an HTTP listener takes: connections at once, and how long (ms) each may take. */
export interface ListenerBounds {
  maxConnections: number
  /** Receiving a request's headers. */
  headersTimeout: number
  /** Receiving a whole request. */
  requestTimeout: number
  /** An idle connection kept after an answer. */
  keepAliveTimeout: number
  /** A connection with no traffic either way: an answer the client does not read included. */
  idleTimeout: number
}

/**
 * A node:http server held to `bounds`: its timeouts enforced within TIMEOUT_CHECK_INTERVAL_MS
 * (Node's default check, every 30 s, cut a slow client up to 30 s late), its connections capped
 * by capConnections with `logDropped`.
 */
export function boundedServer (bounds: ListenerBounds, handler: http.RequestListener, logDropped: (dropped: number) => void): http.Server {
  const { maxConnections, headersTimeout, requestTimeout, keepAliveTimeout, idleTimeout } = bounds
  // Without Host, node:http answers HTTP/1.1 with a bare 400: `handler` answers it (lib/framework-errors.ts, lacksHost).
  const server = http.createServer({ headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS, requireHostHeader: false }, handler)
  server.timeout = idleTimeout
  capConnections(server, maxConnections, logDropped)
  return server
}
