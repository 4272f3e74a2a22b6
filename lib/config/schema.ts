import path from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import { projectRoot } from '../project-root.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const ENVIRONMENTS = ['development', 'production', 'test'] as const
const STORES = ['memory', 'postgres'] as const
const POOLERS = ['none', 'transaction'] as const

/** One of these words (TypeBox checks a union of literals itself; the API's enums are for Ajv). */
function OneOf<T extends string> (values: readonly T[], options: { default?: T } = {}) {
  return Type.Union(values.map((value) => Type.Literal(value)), options)
}

/**
 * Every setting of the service, read from the environment. Defaults live here
 * and nowhere else; `.env.example` and the README's table document them.
 */
export const EnvSchema = Type.Object({
  // A typo (`prod`) must not quietly count as development, with its default credentials.
  NODE_ENV: OneOf(ENVIRONMENTS, { default: 'development' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: OneOf(LOG_LEVELS, { default: 'info' }),
  BODY_LIMIT: Type.Integer({ minimum: 1, default: 1048576 }),
  FILES_DIR: Type.String({ minLength: 1, default: '.' }),
  STATIC_DIR: Type.String({ minLength: 1, default: path.join(projectRoot, 'static') }),
  // A symlink in STATIC_DIR whose target is outside it: served only when this is true.
  STATIC_FOLLOW_SYMLINKS: Type.Boolean({ default: false }),
  // Default: on outside production, off in production (docs/contract.md, The description page).
  DOCS_CATCH_ALL: Type.Optional(Type.Boolean()),
  // The path prefix the reverse proxy serves the API under (/api), or '' for none.
  BASE_PATH: Type.String({ pattern: '^(/[A-Za-z0-9._~!$&\'()*+,;=:@%-]+)*$', default: '' }),
  // Goes inside a quoted string of WWW-Authenticate: no quotes, backslashes or controls.
  AUTH_REALM: Type.String({ pattern: '^[^"\\\\\\u0000-\\u001f\\u007f]+$', default: 'my-realm' }),
  // user:password pairs separated by commas; the user has no colon, neither has a comma.
  BASIC_AUTH_USERS: Type.Optional(Type.String({ pattern: '^[^:,]+:[^,]+(,[^:,]+:[^,]+)*$' })),
  // Bearer tokens (RFC 6750 b64token) separated by commas.
  API_TOKENS: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._~+/-]+=*(,[A-Za-z0-9._~+/-]+=*)*$' })),
  // true, false, a hop count, or comma-separated addresses/CIDR ranges of trusted proxies.
  TRUST_PROXY: Type.String({ pattern: '^(true|false|\\d+|[\\w.:/]+(\\s*,\\s*[\\w.:/]+)*)$', default: 'false' }),
  // Unset: the embedded in-memory store (one process, not durable). Set: PostgreSQL, shared by every replica.
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^$|^postgres(ql)?://' })),
  // Which store, said outright: `memory` is how production is allowed to run without DATABASE_URL.
  // Unset: postgres with DATABASE_URL, memory without it (outside production).
  STORE: Type.Optional(OneOf(STORES)),
  // Items each collection holds at most (/users, /products): past it, POST gets 409; 0 = no ceiling.
  // The default fits the pods' heap with both collections full of their largest items (docs/operations.md, Limits).
  COLLECTION_MAX_ITEMS: Type.Integer({ minimum: 0, default: 35_000 }),
  // A role that may change the schema, for the migrations (`server.js migrate`, or at start): the
  // service's own role (DATABASE_URL) then needs only to read and write rows. Unset: DATABASE_URL.
  DATABASE_MIGRATION_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // Apply the migrations when the service starts (with DATABASE_URL). Off when a release step
  // (`npm run migrate`, a Kubernetes Job) applies them before the new replicas start.
  MIGRATE_ON_START: Type.Boolean({ default: true }),
  // What is between the service and PostgreSQL: `none`, or `transaction` for a pooler that hands
  // a server connection to a client for one transaction only (PgBouncer's pool_mode = transaction):
  // then nothing is kept on a connection between transactions (no named prepared statements, no
  // parameters set when connecting: set statement_timeout on the role instead; docs/operations.md).
  DATABASE_POOLER: OneOf(POOLERS, { default: 'none' }),
  // Connections each replica keeps at most.
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  // Milliseconds a query (or taking a connection) may last before the request gets 503.
  DATABASE_STATEMENT_TIMEOUT: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  // Milliseconds start-up keeps retrying an unreachable database before it gives up (exit 1); 0 = one try.
  DATABASE_STARTUP_TIMEOUT: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  // Milliseconds a client may take to send a request's headers, and the whole request (body
  // included); past them it gets 408 and the connection closes. Answers (long streams) are not bounded.
  HEADERS_TIMEOUT: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 15_000 }),
  REQUEST_TIMEOUT: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000 }),
  // Client connections kept at once; past it new ones are closed at once. 0: the open-file limit
  // less a reserve for the service's own descriptors (lib/connections.ts).
  MAX_CONNECTIONS: Type.Integer({ minimum: 0, default: 0 }),
  // Streamed answers (NDJSON, long lists) open at once per client address (an IPv6 client by its
  // /64); past it, 429 with Retry-After. 0: no limit. (lib/stream-slots.ts)
  STREAMS_PER_CLIENT: Type.Integer({ minimum: 0, default: 16 }),
  // Milliseconds after SIGTERM during which requests on open connections are still answered
  // (with Connection: close) while new connections are refused; then idle ones are closed.
  SHUTDOWN_DRAIN: Type.Integer({ minimum: 0, maximum: 600_000, default: 1000 }),
  // Milliseconds after SIGTERM by which the process exits; what is still running then is cut (exit 1).
  SHUTDOWN_GRACE: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 9000 }),
  // Overload (@fastify/under-pressure): above any of these, requests get 503 with Retry-After. 0 = not checked.
  PRESSURE_MAX_EVENT_LOOP_DELAY: Type.Integer({ minimum: 0, default: 1000 }),
  PRESSURE_MAX_EVENT_LOOP_UTILIZATION: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
  PRESSURE_MAX_HEAP_USED_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  PRESSURE_MAX_RSS_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  // Origins allowed to call the API from a browser (CORS), comma-separated, or * for any; '' for none.
  CORS_ORIGINS: Type.String({ pattern: '^(\\*|https?://[^\\s,/]+(\\s*,\\s*https?://[^\\s,/]+)*)?$', default: '' }),
  // Requests per client address per window, on every route; 0 turns the global limit off.
  RATE_LIMIT_MAX: Type.Integer({ minimum: 0, default: 0 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1, default: 60_000 }),
  // Failed authentications per client address and user name per window, after which that user name
  // gets 429 from that address; 0: no limit. AUTH_FAILURE_ADDRESS_LIMIT: the ceiling for an address
  // over every user name (a guesser trying many names), far above one user's mistakes.
  // AUTH_FAILURE_NETWORK_LIMIT: the ceiling for an IPv6 /48 over its addresses (a guesser taking a
  // new /64 whenever one is refused), ten addresses' ceilings.
  AUTH_FAILURE_LIMIT: Type.Integer({ minimum: 0, default: 10 }),
  AUTH_FAILURE_ADDRESS_LIMIT: Type.Integer({ minimum: 0, default: 100 }),
  AUTH_FAILURE_NETWORK_LIMIT: Type.Integer({ minimum: 0, default: 1000 }),
  AUTH_FAILURE_WINDOW_MS: Type.Integer({ minimum: 1, default: 900_000 }),
  // GET /metrics (Prometheus) and the request metrics behind it, on a listener of its own: no proxy
  // in front of the API can expose it by a path it did not expect. METRICS_HOST: its address (HOST
  // when unset); METRICS_PORT 0: any free port (tests).
  METRICS: Type.Boolean({ default: true }),
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9091 }),
  // Compress responses (gzip, br, deflate) for clients that accept it; off when the proxy compresses.
  COMPRESSION: Type.Boolean({ default: true })
})

/** The names of every setting. */
export const SETTING_NAMES: readonly string[] = Object.keys(EnvSchema.properties)

/** The settings as loadConfig gives them: DOCS_CATCH_ALL, STORE and METRICS_HOST, which have no default, decided from the others. */
export type Config = Omit<Static<typeof EnvSchema>, 'DOCS_CATCH_ALL' | 'STORE' | 'METRICS_HOST'> &
  { DOCS_CATCH_ALL: boolean, STORE: typeof STORES[number], METRICS_HOST: string }
