import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
import { pino, stdSerializers, type DestinationStream, type LoggerOptions } from 'pino'
import { quoteUrl } from './errors.js'
import { stdoutDestination } from './log-destination.js'

/** pino's levels, by name. */
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity }

type Log = (...args: unknown[]) => void

/** How much of a URL the log lines quote: a long one is cut (the request line may be 16 kB). */
const LOGGED_URL_LIMIT = 1024

/** What a log line says of a request (the `req` of its lines): Fastify's own fields, the URL shortened and its credentials redacted. */
export function requestFields (request: FastifyRequest) {
  return {
    method: request.method,
    url: quoteUrl(request.url, LOGGED_URL_LIMIT),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}

/** `,"name":value` as JSON.stringify writes a member of an object: nothing for undefined. */
const member = (name: string, value: string | number | undefined) => value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`

/**
 * requestFields as the JSON of a line's `req` member, written directly: the line of every request
 * at info, which would otherwise build two objects only to serialise them.
 */
export function requestJson (request: FastifyRequest): string {
  return `"req":{"method":${JSON.stringify(request.method)},"url":${JSON.stringify(quoteUrl(request.url, LOGGED_URL_LIMIT))},"host":${JSON.stringify(request.host)}` +
    `${member('remoteAddress', request.ip)}${member('remotePort', request.socket?.remotePort)}}`
}

/**
 * Set on the root loggers serverLogger made, and so on their pino children: pino with pino's own
 * format (no formatters, mixin or message key of their own), whose lines `writeLine` may write as
 * pino would.
 */
const PLAIN = Symbol('plain pino')
const { chindingsSym, streamSym, timeSym } = pino.symbols
type PinoInternals = Record<symbol, unknown>

/**
 * A request's logger (its parent's, bound to its `reqId`) that makes pino's child only when a line
 * is written at an enabled level. Fastify makes a logger for every request, and pino's child
 * (bindings serialised to JSON, methods set up) is a measurable part of a request's CPU (figures:
 * bench/README.md); at the production level (`warn`) most requests never write a line, and a call
 * below the level (the `info` of "incoming request") is dropped without making one.
 */
class LazyLogger {
  readonly #parent: FastifyBaseLogger
  #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #threshold: number
  #child: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
    this.#threshold = LEVELS[options.level ?? parent.level] ?? 0
  }

  #real (): FastifyBaseLogger {
    const parent = this.#parent instanceof LazyLogger ? this.#parent.#real() : this.#parent
    return (this.#child ??= parent.child(this.#bindings, this.#options))
  }

  get level (): string { return this.#child?.level ?? this.#options.level ?? this.#parent.level }
  set level (level: string) {
    this.#real().level = level
    this.#threshold = LEVELS[level] ?? 0
  }

  /**
   * Writes a line at `level` as pino writes one of this logger, its bindings and its parents'
   * included, without making pino's child: `members`, the line's own members as JSON (`"a":1,"msg":"…"`),
   * after them. False, and nothing written, when pino's format may not be the plain one (a root
   * that serverLogger did not make); true when written, or below the level.
   */
  writeLine (level: number, members: string): boolean {
    if (this.#threshold > level) return true
    // The bindings of the lazy loggers up to the first real one, whose own pino has serialised.
    let bindings = ''
    let logger: FastifyBaseLogger = this as unknown as FastifyBaseLogger
    while (logger instanceof LazyLogger && logger.#child === undefined) {
      const json = JSON.stringify(logger.#bindings)
      if (json !== '{}') bindings = `,${json.slice(1, -1)}${bindings}`
      logger = logger.#parent
    }
    const real = (logger instanceof LazyLogger ? logger.#child : logger) as unknown as PinoInternals
    if (real[PLAIN] !== true) return false
    const time = (real[timeSym] as () => string)()
    ;(real[streamSym] as DestinationStream).write(`{"level":${level}${time}${real[chindingsSym] as string}${bindings},${members}}\n`)
    return true
  }

  /** Whether a line at `level` is written. */
  writes (level: number): boolean { return this.#threshold <= level }

  trace (...args: unknown[]) { if (this.#threshold <= 10) (this.#real().trace as Log)(...args) }
  debug (...args: unknown[]) { if (this.#threshold <= 20) (this.#real().debug as Log)(...args) }
  info (...args: unknown[]) { if (this.#threshold <= 30) (this.#real().info as Log)(...args) }
  warn (...args: unknown[]) { if (this.#threshold <= 40) (this.#real().warn as Log)(...args) }
  error (...args: unknown[]) { if (this.#threshold <= 50) (this.#real().error as Log)(...args) }
  fatal (...args: unknown[]) { if (this.#threshold <= 60) (this.#real().fatal as Log)(...args) }
  silent () {}
  /** A child, lazy as well: made for real when it writes its first line (and its parents with it). */
  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new LazyLogger(this as unknown as FastifyBaseLogger, bindings, options ?? {}) as unknown as FastifyBaseLogger
  }

  /**
   * Adds `bindings` to every line written from now on: a request's trace ids, known only once its
   * span has started (lib/tracing.ts). Before the first line they join the bindings the child will
   * be made with, which costs no child now; after it, a child of that child takes them.
   */
  bind (bindings: Bindings): void {
    if (this.#child === undefined) this.#bindings = { ...this.#bindings, ...bindings }
    else this.#child = this.#child.child(bindings)
  }
}

/**
 * Adds `bindings` to the lines a request's logger writes from now on (see LazyLogger.bind): false,
 * and nothing bound, for a logger that `lazyChildLoggerFactory` did not make.
 */
export function bindRequestLogger (log: FastifyBaseLogger, bindings: Bindings): boolean {
  if (!(log instanceof LazyLogger)) return false
  log.bind(bindings)
  return true
}

/**
 * Writes a line of a request's logger at `level` (`members`: its own members as JSON, `msg` among
 * them) as pino would, without the child logger pino makes for the request's bindings
 * (LazyLogger.writeLine); false, and nothing written, for a logger that cannot: the caller writes
 * it through the logger.
 */
export function writeLine (log: FastifyBaseLogger, level: number, members: string): boolean {
  return log instanceof LazyLogger && log.writeLine(level, members)
}

/** Whether `log` writes lines at `level`. */
export function writesAt (log: FastifyBaseLogger, level: number): boolean {
  if (log instanceof LazyLogger) return log.writes(level)
  return (LEVELS[log.level] ?? Infinity) <= level
}

/** pino's options, and where it writes (stdout when not given: `stdoutDestination`). */
export type ServerLoggerOptions = LoggerOptions & { stream?: DestinationStream }

/** The serializers Fastify adds to a logger it makes from options, but not to a logger instance given to it. */
const FASTIFY_SERIALIZERS = {
  res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
  err: stdSerializers.err
}

/**
 * Server option `loggerInstance`: pino with `options` (and the serializers Fastify would add), whose
 * children are LazyLoggers. Fastify asks the server's logger for a request's logger with its own
 * child factory, `logger.child(bindings)`. With a `childLoggerFactory` of ours instead, Fastify
 * checks the logger it returns for seven methods on every request: that check costs as much as the
 * LazyLogger saves (docs/build.md, "A request's logger"; figures: bench/README.md).
 *
 * The instance is pino's root logger with a `child` of its own (pino's methods, levels and
 * serializers are the root's); Fastify makes `fastify.log` as its child, a LazyLogger too.
 */
export function serverLogger ({ stream, ...options }: ServerLoggerOptions): FastifyBaseLogger {
  const settings = { ...options, serializers: { ...FASTIFY_SERIALIZERS, ...options.serializers } }
  const root = pino(settings, stream ?? stdoutDestination()) as unknown as FastifyBaseLogger
  const child = (bindings: Bindings, childOptions?: ChildLoggerOptions) => new LazyLogger(root, bindings, childOptions ?? {})
  if (options.formatters === undefined && options.mixin === undefined && options.messageKey === undefined && options.timestamp === undefined) {
    Object.defineProperty(root, PLAIN, { value: true })
  }
  return Object.create(root, { child: { value: child } }) as FastifyBaseLogger
}

/**
 * Server option `childLoggerFactory`: a LazyLogger for each request, where Fastify makes the logger
 * itself from options (`fastify start`: fastify-cli passes its own `logger` option).
 */
export const lazyChildLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyLogger(logger, bindings, options) as unknown as FastifyBaseLogger
