import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'

/** pino's levels, by name. */
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity }

type Log = (...args: unknown[]) => void

/**
 * A request's logger (its parent's, bound to its `reqId`) that makes pino's child only when a line
 * is written at an enabled level. Fastify makes a logger for every request, and pino's child
 * (bindings serialised to JSON, methods set up) cost about 5 µs of CPU per request here; at the
 * production level (`warn`) most requests never write a line, and a call below the level (the
 * `info` of "incoming request") is dropped without making one.
 */
class LazyLogger {
  readonly #parent: FastifyBaseLogger
  #bindings: Bindings
  readonly #options: ChildLoggerOptions
  readonly #threshold: number
  #child: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
    this.#threshold = LEVELS[options.level ?? parent.level] ?? 0
  }

  #real (): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options))
  }

  get level (): string { return this.#child?.level ?? this.#options.level ?? this.#parent.level }
  set level (level: string) { this.#real().level = level }

  trace (...args: unknown[]) { if (this.#threshold <= 10) (this.#real().trace as Log)(...args) }
  debug (...args: unknown[]) { if (this.#threshold <= 20) (this.#real().debug as Log)(...args) }
  info (...args: unknown[]) { if (this.#threshold <= 30) (this.#real().info as Log)(...args) }
  warn (...args: unknown[]) { if (this.#threshold <= 40) (this.#real().warn as Log)(...args) }
  error (...args: unknown[]) { if (this.#threshold <= 50) (this.#real().error as Log)(...args) }
  fatal (...args: unknown[]) { if (this.#threshold <= 60) (this.#real().fatal as Log)(...args) }
  silent () {}
  child (bindings: Bindings, options?: ChildLoggerOptions) { return this.#real().child(bindings, options) }

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

/** Server option `childLoggerFactory`: see LazyLogger. */
export const lazyChildLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyLogger(logger, bindings, options) as unknown as FastifyBaseLogger
