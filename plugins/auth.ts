import fp from 'fastify-plugin'
import basicAuth from '@fastify/basic-auth'
import createError from '@fastify/error'
import type { FastifyError, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { failureLimiter, keyPolicy, type FailureStore } from '../lib/auth-failures.js'
import { memoryFailureStore } from '../lib/memory/auth-failures.js'
import { addressGroup, networkGroup } from '../lib/client-address.js'
import { RETRY_AFTER_SECONDS, exposed } from '../lib/errors.js'
import { throttled } from '../lib/throttle.js'
import { bearerRequired, bearerToken, credentialsVerifier, secretMatcher, type AuthUser } from '../lib/secrets.js'
import { unauthorizedResponse } from '../schemas/auth.js'
import { TooManyResponse, UnavailableResponse, addResponses } from '../schemas/common.js'
import { FailureTableFull, InvalidBearerToken, InvalidCredentials, MissingBearerToken, StoreUnavailable, TooManyFailures, TooManyNetworkFailures, TooManyUserFailures } from '../lib/error-codes.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Credentials the route requires, declared once: `basic` (HTTP Basic Authentication against
     * BASIC_AUTH_USERS, realm AUTH_REALM) or `bearer` (a token of API_TOKENS; without API_TOKENS,
     * none in production and open elsewhere). The auth plugin enforces it; the description page
     * and the OpenAPI document show it.
     */
    auth?: 'basic' | 'bearer'
  }
  interface FastifyRequest {
    /** The user whose Basic credentials were verified; set on routes with `config.auth: 'basic'`. */
    authUser: AuthUser | null
  }
}

// @fastify/basic-auth's own code for the same refusal (its MissingOrBadAuthorizationHeader), with a
// message that says what to send; the service's other 401s are its own (lib/error-codes.ts).
export const MissingBasicCredentials = createError('FST_BASIC_AUTH_MISSING_OR_BAD_AUTHORIZATION_HEADER', 'Authorization: this endpoint needs a header "Basic <base64 of user:password>"', 401)

/** The most often a full table of failures is logged: a flood of refusals is one line per interval. */
const FULL_LOG_INTERVAL_MS = 60_000

/**
 * The identity that credentials the scheme cannot read claim: they are counted together, per
 * address, so a broken client locks out only itself.
 */
const UNREADABLE = 'unreadable'
/** @fastify/basic-auth's code for a header it cannot read. */
const UNREADABLE_BASIC = 'FST_BASIC_AUTH_MISSING_OR_BAD_AUTHORIZATION_HEADER'

export interface AuthOptions {
  /** Where failures are counted: by default the database's table with a database, else memory. */
  failureStore?: FailureStore
  /** The most entries the memory store holds (MEMORY_FAILURE_ENTRIES by default). */
  failureTableEntries?: number
}

/**
 * Enforces the `config.auth` that routes declare. Its hook goes first in the route's onRequest
 * list: authentication precedes content negotiation (406/415) and validation (400). Failed
 * authentications are limited (lib/auth-failures.ts): AUTH_FAILURE_LIMIT per client address and
 * user name (a Bearer token is its own name), AUTH_FAILURE_ADDRESS_LIMIT per client address,
 * AUTH_FAILURE_NETWORK_LIMIT per IPv6 /48, per AUTH_FAILURE_WINDOW_MS; counted in the database
 * when the service has one (every replica sees the same counts), else in memory, in a table of
 * bounded size: once locks fill half of it, an attempt whose failure would lock one more key gets
 * 503 (logged at most once a minute).
 */
export default fp<AuthOptions>(async function auth (fastify, opts) {
  const { AUTH_REALM, BASIC_AUTH_USERS, API_TOKENS, AUTH_FAILURE_LIMIT, AUTH_FAILURE_ADDRESS_LIMIT, AUTH_FAILURE_NETWORK_LIMIT, AUTH_FAILURE_WINDOW_MS } = fastify.config
  const basicChallenge = `Basic realm="${AUTH_REALM}"`
  const bearerChallenge = `Bearer realm="${AUTH_REALM}"`

  if (BASIC_AUTH_USERS === undefined) {
    fastify.log.warn('BASIC_AUTH_USERS is not set: every request to an endpoint behind Basic Authentication will be refused')
  }
  const bearer = bearerRequired(fastify.config)
  if (bearer && API_TOKENS === undefined) {
    fastify.log.warn('API_TOKENS is not set: every request to an endpoint behind a Bearer token will be refused')
  }
  const verify = credentialsVerifier(BASIC_AUTH_USERS)
  const matchToken = secretMatcher(API_TOKENS === undefined ? [] : API_TOKENS.split(','))

  // With a database, the counts are in it: a guesser cannot spread its attempts over the replicas,
  // nor wait for a restart. The routes behind authentication all use that database, so while it is
  // down, failing closed (503) takes away nothing that would have worked; failing open would give
  // a guesser that can slow the database unlimited attempts, and its answers (401, or 503 from the
  // route once the password is right) would still tell it when it had found the password.
  const database = fastify.hasDecorator('pg')
  const limits = { limit: AUTH_FAILURE_LIMIT, addressLimit: AUTH_FAILURE_ADDRESS_LIMIT, networkLimit: AUTH_FAILURE_NETWORK_LIMIT }
  const store: FailureStore = opts.failureStore ?? (database
    ? (await import('../lib/postgres/auth-failures.js')).postgresFailureStore(fastify.pg.pool)
    : memoryFailureStore({ maxEntries: opts.failureTableEntries, ...keyPolicy(limits) }))
  const limiter = failureLimiter({
    store,
    ...limits,
    windowMs: AUTH_FAILURE_WINDOW_MS,
    // An attempt waits for the one before it of the same user only as long as a query may last.
    waitMs: fastify.config.DATABASE_STATEMENT_TIMEOUT
  })

  fastify.decorateRequest('authUser', null)
  // @fastify/basic-auth reads the header (RFC 7617, strictly; UTF-8) and hands the user name and
  // password to `validate`, where the limits are checked for that user name before the password is.
  // The challenge is added below: the plugin's own adds `charset`, and the contract fixes the exact
  // value (docs/contract.md, Authentication).
  await fastify.register(basicAuth, {
    authenticate: false,
    async validate (user, password, request) {
      const authUser = await limited(request, `basic:${user}`, () => verify(user, password))
      if (authUser === null) throw new InvalidCredentials(AUTH_REALM)
      request.authUser = authUser
    }
  })
  const basicHook = fastify.basicAuth as onRequestHookHandler
  const checkBasic = (request: FastifyRequest, reply: FastifyReply) => new Promise<void>((resolve, reject) => {
    basicHook.call(fastify, request, reply, (err?: Error) => err === undefined ? resolve() : reject(err))
  })

  /** A refusal with the route's challenge. */
  const challenged = (reply: FastifyReply, challenge: string, error: FastifyError) => {
    reply.header('www-authenticate', challenge)
    return error
  }

  /** Says, at most once per FULL_LOG_INTERVAL_MS, that attempts are refused for want of room to count them. */
  const noteFull = throttled(FULL_LOG_INTERVAL_MS, (refused) => {
    fastify.log.warn({ refused }, 'failed authentications: locks fill half the table of counts; attempts whose failure would lock one more get 503')
  })

  /**
   * Checks credentials that claim `identity` within the limits on failures: the check's value, or
   * null when it refused them (counted); a 429 over a limit, a 503 when the counts cannot be read
   * or have no room for this attempt's.
   */
  async function limited<T> (request: FastifyRequest, identity: string, check: () => T | null): Promise<T | null> {
    const attempt = await limiter.attempt({ address: addressGroup(request.ip), network: networkGroup(request.ip) }, identity, check)
    switch (attempt.outcome) {
      case 'accepted': return attempt.value
      case 'refused': return null
      case 'limited': {
        const TooMany = { user: TooManyUserFailures, address: TooManyFailures, network: TooManyNetworkFailures }[attempt.scope]
        throw exposed(new TooMany(attempt.retryAfter), { 'retry-after': String(attempt.retryAfter) })
      }
      case 'busy': throw exposed(new StoreUnavailable(), { 'retry-after': String(RETRY_AFTER_SECONDS) })
      case 'full': {
        noteFull()
        throw exposed(new FailureTableFull(attempt.retryAfter), { 'retry-after': String(attempt.retryAfter) })
      }
    }
  }

  // A request without credentials gets the challenge and is not counted: it is how a browser asks
  // for the challenge, and it guesses nothing.
  const requireBasic = async function requireBasic (request: FastifyRequest, reply: FastifyReply) {
    if (request.headers.authorization === undefined) throw challenged(reply, basicChallenge, new MissingBasicCredentials())
    try {
      await checkBasic(request, reply)
    } catch (err) {
      const error = err as FastifyError
      if (error.statusCode !== 401) throw error
      if (error.code !== UNREADABLE_BASIC) throw challenged(reply, basicChallenge, error)
      // Credentials that @fastify/basic-auth could not read are counted too (and may be over a limit).
      await limited(request, UNREADABLE, () => null)
      throw challenged(reply, basicChallenge, new MissingBasicCredentials())
    }
  }
  // A token is its own user name: a client that keeps sending a wrong one is refused, and the
  // other token holders behind its address are not. What protects a token is its length, not a
  // limit of ten guesses; a guesser of tokens is bounded by the address's ceiling.
  const requireBearer = async function requireBearer (request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers.authorization
    if (header === undefined) throw challenged(reply, bearerChallenge, new MissingBearerToken())
    const token = bearerToken(header)
    const accepted = token === undefined
      ? await limited(request, UNREADABLE, () => null)
      : await limited(request, `bearer:${token}`, () => matchToken(token) === -1 ? null : true)
    if (accepted === null) throw challenged(reply, bearerChallenge, token === undefined ? new MissingBearerToken() : new InvalidBearerToken())
  }

  const limitResponses = limiter.enabled ? { 429: TooManyResponse, 503: UnavailableResponse } : {}
  const basicResponses = { 401: unauthorizedResponse(basicChallenge, new InvalidCredentials(AUTH_REALM)), ...limitResponses }
  const bearerResponses = { 401: unauthorizedResponse(bearerChallenge, new InvalidBearerToken()), ...limitResponses }
  fastify.addHook('onRoute', (route) => {
    const scheme = route.config?.auth
    // Without API_TOKENS outside production, the token header is ignored: the routes stay open.
    const hook = scheme === 'basic' ? requireBasic : scheme === 'bearer' && bearer ? requireBearer : undefined
    if (hook === undefined) return
    addResponses(route.schema, scheme === 'basic' ? basicResponses : bearerResponses)
    // A new array: the GET route and its automatic HEAD route share the original one.
    route.onRequest = [hook, ...[route.onRequest ?? []].flat()] as typeof route.onRequest
  })
}, { name: 'auth', dependencies: ['config', 'collections'] })
