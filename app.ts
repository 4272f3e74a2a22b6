import path from 'node:path'
import autoload from '@fastify/autoload'
import type { FastifyHttpOptions, FastifyInstance, RawServerDefault } from 'fastify'
import config, { type ConfigPluginOptions } from './plugins/config.js'
import type { Config } from './lib/config/schema.js'
import { trustProxyOption } from './lib/config/trust-proxy.js'
import { clientErrorHandler, frameworkErrors } from './lib/framework-errors.js'
import { requestId } from './lib/request-id.js'
import { requestFields, serverLogger, type ServerLoggerOptions } from './lib/logger.js'
import { AccessLogController } from './lib/access-log.js'
import { REDACTED } from './lib/query-redaction.js'
import { activeTracing } from './lib/tracing.js'
import { holdNextTickShape } from './lib/next-tick-shape.js'
import { TIMEOUT_CHECK_INTERVAL_MS } from './lib/connections.js'

/**
 * How long the app's plugins may take to register beyond DATABASE_STARTUP_TIMEOUT, during which
 * start-up retries an unreachable database (Fastify's own limit for a plugin is 10 s).
 */
export const PLUGIN_START_MS = 10_000

/**
 * The logger's options, from the settings: the level, Fastify's request serializer with the URL
 * shortened, credentials redacted (headers, and query parameters: lib/query-redaction.ts).
 */
export function loggerOptions (config: Config) {
  return {
    level: config.LOG_LEVEL,
    serializers: {
      // Fastify's own request serializer, the URL shortened and its credentials redacted.
      req: requestFields
    },
    // Credentials never reach the logs where headers are logged. Plain paths only: pino applies
    // redaction to every child logger's bindings, once per request, and wildcards make that slow.
    redact: {
      paths: ['headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie'],
      censor: REDACTED
    }
  } satisfies ServerLoggerOptions
}

/**
 * The server options, from the settings: one place for every entry point — server.ts, `fastify
 * start` (cli.ts) and the tests. `logger`: where and how it logs (a test's sink), or false for
 * no logs at all; by default, loggerOptions on stdout.
 */
export function serverOptions (config: Config, { logger = loggerOptions(config) }: { logger?: ServerLoggerOptions | false } = {}) {
  return {
    routerOptions: {
      ignoreTrailingSlash: true,
      // Captures are validated by their schemas; a long one is a 400, not a missing route.
      maxParamLength: 8192
    },
    // Fastify's 10 s would cut the database's retries at start-up short ("did not start in time").
    pluginTimeout: config.DATABASE_STARTUP_TIMEOUT + PLUGIN_START_MS,
    // Requests refused before any route runs get the same JSON error body as every other error.
    frameworkErrors,
    clientErrorHandler,
    // The proxy's X-Request-Id when it is sane, else a new id: the reqId of every log line.
    genReqId: requestId,
    // pino, whose request loggers are made when they first write a line (see lib/logger.ts).
    ...(logger === false ? { logger: false } : { loggerInstance: serverLogger(logger) }),
    // One line per request, when it ends (lib/access-log.ts); with tracing (lib/tracing.ts, started
    // before), its lines wait for the request's span.
    logController: activeTracing()?.logController ?? new AccessLogController(),
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // Give slow clients a bound; responses (e.g. long streams) are not limited by these. node:http
    // looks for connections past them every connectionsCheckingInterval (30 s by default, which cut
    // a slow client up to 30 s late): twice a second, the bound holds within half a second.
    requestTimeout: config.REQUEST_TIMEOUT,
    http: {
      headersTimeout: config.HEADERS_TIMEOUT,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      // node:http answers an HTTP/1.1 request without Host with a bare 400 of its own; the service
      // answers it as every other error (plugins/edge/host.ts).
      requireHostHeader: false
    },
    // While closing, a request that arrives on an open connection is answered (with Connection:
    // close), not refused with 503: plugins/shutdown.ts drains before the close.
    return503OnClosing: false
  } satisfies FastifyHttpOptions<RawServerDefault>
}

/** The options of the app, as of each plugin it registers: the settings, when already loaded. */
export type AppOptions = ConfigPluginOptions

const PLUGINS = path.join(import.meta.dirname, 'plugins')

/**
 * The edge plugins, plugins/edge/, each configured from the settings by its `autoConfig`: what
 * stands between the client and the routes (security headers and X-Request-Id, CORS, compression,
 * metrics, tracing, overload, rate limits). They need the settings registered before them.
 */
export async function edgePlugins (fastify: FastifyInstance) {
  await fastify.register(autoload, { dir: path.join(PLUGINS, 'edge'), options: {} })
}

/**
 * The plugins the routes are built on: the thin wrappers of third-party plugins of
 * plugins/external/ (each configured by its `autoConfig`), then ours from plugins/. They need the
 * settings registered before them.
 */
export async function servicePlugins (fastify: FastifyInstance, opts: AppOptions) {
  await fastify.register(autoload, { dir: path.join(PLUGINS, 'external'), options: {} })
  await fastify.register(autoload, {
    dir: PLUGINS,
    ignorePattern: /^(edge|external|config\.[jt]s)$/,
    options: opts
  })
}

/** The shared plugins: the settings (plugins/config.ts), the edge plugins, then the service's. */
export async function plugins (fastify: FastifyInstance, opts: AppOptions) {
  // Whichever entry started the process (server.ts has done it already; `fastify start`, the tests).
  holdNextTickShape()
  await fastify.register(config, opts)
  await edgePlugins(fastify)
  await servicePlugins(fastify, opts)
}

/** The endpoint groups, from routes/: a folder's name is its URL prefix. */
export async function routes (fastify: FastifyInstance, opts: AppOptions) {
  await fastify.register(autoload, {
    dir: path.join(import.meta.dirname, 'routes'),
    options: opts
  })
}

/** The service: the shared plugins, then the endpoint groups. */
export default async function app (fastify: FastifyInstance, opts: AppOptions) {
  await plugins(fastify, opts)
  await routes(fastify, opts)
}
