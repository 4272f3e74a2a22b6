import createError from '@fastify/error'

// The service's own errors: every `code` it answers with that Fastify (or a Fastify plugin) does
// not raise itself, in one place and with a prefix of their own, so that a client can tell the
// service's refusals from Fastify's (`FST_ERR_VALIDATION`, `FST_ERR_CTP_*`, `FST_ERR_NOT_FOUND`,
// which stay as Fastify raises them). docs/contract.md, "Error codes", lists them; a test holds
// that list to this file. The message's `%s` are filled in where the error is raised.

/** The prefix of the service's own codes. */
export const CODE_PREFIX = 'API_ERR_'

// A Range header that does not parse, or asks for what a listing cannot give (docs/contract.md, "Ranges").
export const InvalidRange = createError('API_ERR_RANGE_INVALID', 'Invalid Range: %s', 400)
export const InvalidRangeOptions = createError('API_ERR_RANGE_OPTIONS', 'Invalid Range Options: %s', 400)
export const InvalidRangeOrder = createError('API_ERR_RANGE_ORDER', 'Invalid Range Order: %s', 400)
export const InvalidRangeValue = createError('API_ERR_RANGE_VALUE', 'Invalid Range Value: %s', 400)
export const NegativeLimit = createError('API_ERR_RANGE_LIMIT', 'Limit must be non-negative: the Range header has limit %s', 400)
export const NegativeOffset = createError('API_ERR_RANGE_OFFSET', 'Offset must be non-negative: the Range header has offset %s', 400)
export const RangeWithSort = createError('API_ERR_RANGE_SORTBY', 'Invalid Range: a Range pages in id order; it cannot be combined with sortby=%s', 400)

// Requests the service refuses before a route runs (docs/contract.md, "The order of refusals").
export const HostMissing = createError('API_ERR_HOST_MISSING', 'An HTTP/1.1 request must have a Host header', 400)
export const MethodNotAllowed = createError('API_ERR_METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; allowed: %s', 405)
export const NotAcceptable = createError('API_ERR_NOT_ACCEPTABLE', 'Accept: %s matches none of the types this endpoint produces: %s', 406)
export const BodyNotAccepted = createError('API_ERR_BODY_NOT_ACCEPTED', '%s %s takes no request body', 413)
export const UnsupportedContentEncoding = createError('API_ERR_CONTENT_ENCODING', 'Content-Encoding %s is not supported: send the body as it is, without a content coding (identity)', 415)
export const ForbiddenKey = createError('API_ERR_FORBIDDEN_KEY', 'Body has a key that is refused: %s', 400)

// The collections.
export const ItemNotFound = createError('API_ERR_ITEM_NOT_FOUND', 'No %s with %s %s', 404)
// 409, not a 5xx: the collection's state refuses the item, and a retry succeeds once an item is deleted, not later (docs/contract.md, Collections).
export const CollectionFull = createError('API_ERR_COLLECTION_FULL', 'The collection is full: it holds %s items, as many as it may; delete one to add another', 409)

// Credentials a route asks for (docs/contract.md, "Authentication"): 401 with the route's challenge.
// A Basic header that cannot be read keeps @fastify/basic-auth's own code (plugins/auth.ts).
export const InvalidCredentials = createError('API_ERR_AUTH_BASIC_INVALID', 'Authorization: the user name or password is wrong for realm %s', 401)
export const MissingBearerToken = createError('API_ERR_AUTH_BEARER_MISSING', 'Authorization: this endpoint needs a header "Bearer <token>"', 401)
export const InvalidBearerToken = createError('API_ERR_AUTH_BEARER_INVALID', 'Authorization: the Bearer token is not valid', 401)

// Limits per client (docs/operations.md, "Limits").
export const RateLimited = createError('API_ERR_RATE_LIMITED', 'Too many requests from this address: at most %s in %s seconds; retry in %s seconds', 429)
export const TooManyUserFailures = createError('API_ERR_AUTH_RATE_LIMITED', 'Too many failed authentications for these credentials from this address; retry in %s seconds', 429)
export const TooManyFailures = createError('API_ERR_AUTH_RATE_LIMITED', 'Too many failed authentications from this address; retry in %s seconds', 429)
export const TooManyStreams = createError('API_ERR_TOO_MANY_STREAMS', 'This address has %s streamed answers open already, as many as it may (STREAMS_PER_CLIENT); retry in %s seconds', 429)
export const TooManyNetworkFailures = createError('API_ERR_AUTH_RATE_LIMITED', 'Too many failed authentications from this network; retry in %s seconds', 429)
export const FailureTableFull = createError('API_ERR_AUTH_TABLE_FULL', 'The service counts as many failed authentications as it can hold; retry in %s seconds', 503)

// The service's own state: its database, its shutdown, its readiness.
export const StoreUnavailable = createError('API_ERR_STORE_UNAVAILABLE', 'The database is unavailable: retry later', 503)
export const ShuttingDown = createError('API_ERR_SHUTTING_DOWN', 'The service is shutting down: the stream did not start', 503)
export const NotReady = createError('API_ERR_NOT_READY', 'Not ready: %s', 503)

// A schema of a route that does not compile (plugins/compile-later.ts): the route answers 500
// with this code, and the line logged names the route and the schema.
export const SchemaDoesNotCompile = createError('API_ERR_SCHEMA_COMPILE', 'The schema of %s does not compile: %s', 500)

// Start-up and `server.js migrate`: these end the process, they answer no request.
export const SchemaBehind = createError<'API_ERR_SCHEMA_BEHIND', 500, [database: string, at: number, needs: number, hint: string]>('API_ERR_SCHEMA_BEHIND', 'The database %s is at migration %s; this version needs %s: apply the migrations first (`node dist/bundle/server.js migrate`, or MIGRATE_ON_START=true)%s', 500)
export const NoDatabase = createError('API_ERR_NO_DATABASE', 'No database to migrate: set DATABASE_MIGRATION_URL or DATABASE_URL', 500)
