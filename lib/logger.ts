import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
import { pino, stdSerializers, type DestinationStream, type LoggerOptions } from 'pino'
import { quoteUrl } from './errors.js'
import { integer, integerLength, literal, plainString, raw } from './json-bytes.js'
import { LogDestination, stdoutDestination, type DeferredLine } from './log-destination.js'

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
 * Milliseconds as a JSON number to the microsecond (`0.412`, `12.5`, `3`): the request line's
 * `responseTime`. Node writes a double like 0.41212499141693115 in full, which costs more than the
 * rest of the line; the microseconds past the third decimal say nothing of a request's time.
 */
export function milliseconds (ms: number): string {
  const micros = Math.round(ms * 1000)
  const whole = Math.trunc(micros / 1000)
  const fraction = Math.abs(micros - whole * 1000)
  if (fraction === 0) return `${whole}`
  const digits = fraction < 10 ? `00${fraction}` : fraction < 100 ? `0${fraction}` : `${fraction}`
  return `${micros < 0 && whole === 0 ? '-' : ''}${whole}.${digits.replace(/0+$/, '')}`
}

/**
 * requestFields as the JSON of a line's `req` member, written directly: the line of every request
 * at info, which would otherwise build two objects only to serialise them.
 */
export function requestJson (request: FastifyRequest): string {
  return `"req":{"method":${JSON.stringify(request.method)},"url":${JSON.stringify(quoteUrl(request.url, LOGGED_URL_LIMIT))},"host":${JSON.stringify(request.host)}` +
    `${member('remoteAddress', request.ip)}${member('remotePort', request.socket?.remotePort)}}`
}

const REQ_HOST = literal(',"host":')
const REQ_ADDRESS = literal(',"remoteAddress":')
const REQ_PORT = literal(',"remotePort":')
const REQ_END = literal('}')

/** `"req":{"method":"GET","url":` encoded, for each of the methods the service answers (and its 405s name). */
const METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((method) => [method, literal(`"req":{"method":"${method}","url":`)]))

/** The start of `req`, to its `url`: encoded once for a method of METHODS, written each time for another. */
function methodBytes (method: string): Uint8Array {
  return METHODS.get(method) ?? literal(`"req":{"method":${JSON.stringify(method)},"url":`)
}

/**
 * The end of a request's `req`, `,"host":"…","remoteAddress":"…","remotePort":…}`, as the first
 * line of its connection wrote it, kept on the connection's socket with the host and address it
 * was written for. A keep-alive connection's requests share its port and, nearly always, its host
 * and address; written byte by byte for each, they were a quarter of the line (figures:
 * bench/README.md). A request whose host or address differs (a client named by a proxy, with
 * TRUST_PROXY) has them written anew. Its own copy of the bytes: a slice of Node's pool would hold
 * the whole pool for as long as the connection lives.
 */
class PeerBytes {
  constructor (readonly host: string, readonly address: string | undefined, readonly bytes: Uint8Array) {}
}
const PEER = Symbol('peer bytes')
type PeerSocket = FastifyRequest['socket'] & { [PEER]?: PeerBytes }

/** requestJson, written into a buffer (lib/json-bytes.ts): where it ends, or -1. */
export function requestBytes (buffer: Buffer, at: number, request: FastifyRequest): number {
  at = raw(buffer, at, methodBytes(request.method))
  at = plainString(buffer, at, quoteUrl(request.url, LOGGED_URL_LIMIT))
  const host = request.host
  const address = request.ip
  const socket = request.socket as PeerSocket | undefined
  const kept = socket?.[PEER]
  if (kept !== undefined && kept.host === host && kept.address === address) return raw(buffer, at, kept.bytes)
  const start = at
  at = plainString(buffer, raw(buffer, at, REQ_HOST), host)
  if (address !== undefined) at = plainString(buffer, raw(buffer, at, REQ_ADDRESS), address)
  const port = socket?.remotePort
  if (port !== undefined) at = integer(buffer, raw(buffer, at, REQ_PORT), port)
  at = raw(buffer, at, REQ_END)
  // Kept for the connection's next requests, if it may have any.
  if (kept === undefined && at >= 0 && socket !== undefined && !socket.destroyed) {
    socket[PEER] = new PeerBytes(host, address, new Uint8Array(buffer.subarray(start, at)))
  }
  return at
}

/**
 * Set on the root loggers serverLogger made, and so on their pino children: pino with pino's own
 * format (no formatters, mixin or message key of their own), whose lines `writeLine` may write as
 * pino would.
 */
const PLAIN = Symbol('plain pino')
const { chindingsSym, streamSym, timeSym } = pino.symbols
type PinoInternals = Record<symbol, unknown>

const COMMA = literal(',')
const LINE_END = literal('}\n')

/**
 * The start of a line, `{"level":30,"time":1795879729681,"pid":…,"hostname":"…"` (pino's chindings:
 * the process's bindings), encoded for the level and chindings of the line before. When only the
 * millisecond has changed, its digits are written again in place: made anew for each millisecond,
 * it cost a tenth of the line (figures: bench/README.md).
 */
class LineStart {
  readonly bytes: Buffer
  /** Where the time's digits are in `bytes`, and how many there are (-1: not an integer written so). */
  readonly timeAt: number
  readonly timeLength: number

  constructor (readonly level: number, public time: number, readonly chindings: string) {
    const head = `{"level":${level},"time":`
    this.bytes = literal(`${head}${time}${chindings}`)
    this.timeAt = head.length
    this.timeLength = integerLength(time)
  }
}
let start = new LineStart(0, 0, '')
function lineStart (level: number, time: number, chindings: string): Buffer {
  const last = start
  if (time !== last.time || level !== last.level || chindings !== last.chindings) {
    if (level === last.level && chindings === last.chindings && last.timeLength > 0 && integerLength(time) === last.timeLength) {
      integer(last.bytes, last.timeAt, time)
      last.time = time
    } else {
      start = new LineStart(level, time, chindings)
    }
  }
  return start.bytes
}

/** The most binding names whose `,"name":` is kept encoded: a logger's names are a handful (reqId, the trace ids). */
const NAMES_KEPT = 64
const names = new Map<string, Buffer | undefined>()
let lastName = ''
let lastNameBytes: Buffer | undefined
/**
 * `,"name":` encoded, for a binding's name that is a plain string (printable ASCII, nothing to
 * escape); undefined for another. The name of the line before is kept at hand: it is nearly
 * always `reqId`.
 */
function bindingName (name: string): Buffer | undefined {
  if (name === lastName) return lastNameBytes
  lastName = name
  lastNameBytes = bindingNameBytes(name)
  return lastNameBytes
}
function bindingNameBytes (name: string): Buffer | undefined {
  let bytes = names.get(name)
  if (bytes === undefined && !names.has(name)) {
    bytes = /^[\x20-\x7e]*$/.test(name) && JSON.stringify(name) === `"${name}"` ? literal(`,"${name}":`) : undefined
    if (names.size < NAMES_KEPT) names.set(name, bytes)
  }
  return bytes
}

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
    const line = this.#lineText(level, undefined, members)
    if (line === undefined) return false
    ;(this.#realOf()[streamSym] as DestinationStream).write(line)
    return true
  }

  /**
   * The pino logger that writes this one's lines: its child if made, else the first one made above
   * it (the root, or a lazy one that has written).
   */
  #realOf (): PinoInternals {
    let logger: FastifyBaseLogger = this as unknown as FastifyBaseLogger
    while (logger instanceof LazyLogger && logger.#child === undefined) logger = logger.#parent
    return (logger instanceof LazyLogger ? logger.#child : logger) as unknown as PinoInternals
  }

  /**
   * writeLine's line, at `time` (pino's time when undefined): undefined when pino's format may not
   * be the plain one.
   */
  #lineText (level: number, time: number | undefined, members: string): string | undefined {
    // The bindings of the lazy loggers up to the first real one, whose own pino has serialised.
    let bindings = ''
    let logger: FastifyBaseLogger = this as unknown as FastifyBaseLogger
    while (logger instanceof LazyLogger && logger.#child === undefined) {
      const json = JSON.stringify(logger.#bindings)
      if (json !== '{}') bindings = `,${json.slice(1, -1)}${bindings}`
      logger = logger.#parent
    }
    const real = this.#realOf()
    if (real[PLAIN] !== true) return undefined
    const timeMember = time === undefined ? (real[timeSym] as () => string)() : `,"time":${time}`
    return `{"level":${level}${timeMember}${real[chindingsSym] as string}${bindings},${members}}\n`
  }

  /**
   * Defers a line of this logger to the end of the turn (`line`: its level and how its members are
   * written, from `a` and `b`): its LogDestination then writes it into its buffer, with the lines
   * of all the requests that ended in the turn (LogDestination.defer), or as writeLine writes it
   * when it cannot. False, and nothing deferred, when its stream is another than a LogDestination
   * or pino's format not the plain one: the caller writes the line itself. True when deferred, or
   * below the level.
   */
  defer<A, B> (line: RequestLine<A, B>, a: A, b: B): boolean {
    if (this.#threshold > line.level) return true
    const real = this.#realOf()
    const destination = real[streamSym]
    if (real[PLAIN] !== true || !(destination instanceof LogDestination)) return false
    destination.defer(line, this, a, b)
    return true
  }

  /**
   * A deferred line written into `buffer` from `at`, at `time`: where it ends, or -1 when it cannot
   * be written so (this logger's pino made since, a binding or a value not a plain string).
   */
  static lineBytes<A, B> (buffer: Buffer, at: number, logger: LazyLogger, line: RequestLine<A, B>, a: A, b: B, time: number): number {
    if (logger.#child !== undefined) return -1
    at = raw(buffer, at, lineStart(line.level, time, logger.#realOf()[chindingsSym] as string))
    at = logger.#bindingsBytes(buffer, at)
    at = raw(buffer, at, COMMA)
    return raw(buffer, line.membersBytes(buffer, at, a, b), LINE_END)
  }

  /** A deferred line as writeLine writes it, at `time`. */
  static lineText<A, B> (logger: LazyLogger, line: RequestLine<A, B>, a: A, b: B, time: number): string {
    return logger.#lineText(line.level, time, line.membersText(a, b))!
  }

  /** The bindings of this logger and of the lazy ones above it not yet made, outermost first, as writeLine writes them: `,"reqId":"…"`. */
  #bindingsBytes (buffer: Buffer, at: number): number {
    const parent = this.#parent
    if (parent instanceof LazyLogger && parent.#child === undefined) at = parent.#bindingsBytes(buffer, at)
    for (const name in this.#bindings) {
      const value = this.#bindings[name]
      if (value === undefined) continue
      const member = bindingName(name)
      at = member !== undefined && typeof value === 'string' ? plainString(buffer, raw(buffer, at, member), value) : -1
    }
    return at
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

/**
 * A request's line, deferred (deferLine): its level, and how its own members (`"req":…,"msg":"…"`)
 * are written from the two values it was deferred with: as bytes (`membersBytes`, lib/json-bytes.ts:
 * where they end, or -1) and as a string (`membersText`).
 */
export class RequestLine<A, B> implements DeferredLine<LazyLogger, A, B> {
  constructor (
    readonly level: number,
    readonly membersBytes: (buffer: Buffer, at: number, a: A, b: B) => number,
    readonly membersText: (a: A, b: B) => string
  ) {}

  bytes (buffer: Buffer, at: number, logger: LazyLogger, a: A, b: B, time: number): number {
    return LazyLogger.lineBytes(buffer, at, logger, this, a, b, time)
  }

  text (logger: LazyLogger, a: A, b: B, time: number): string {
    return LazyLogger.lineText(logger, this, a, b, time)
  }
}

/**
 * Defers a line of a request's logger to the end of the turn (LazyLogger.defer): false, and
 * nothing deferred, when it cannot; the caller writes it (writeLine).
 */
export function deferLine<A, B> (log: FastifyBaseLogger, line: RequestLine<A, B>, a: A, b: B): boolean {
  return log instanceof LazyLogger && log.defer(line, a, b)
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
