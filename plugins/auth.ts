import fp from 'fastify-plugin'
import basicAuth from '@fastify/basic-auth'
import createError from '@fastify/error'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { bearerToken, credentialsVerifier, secretMatcher, type AuthUser } from '../lib/secrets.js'
import { unauthorizedResponse } from '../schemas/auth.js'
import { TooManyResponse, addResponses } from '../schemas/common.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Credentials the route requires, declared once: `basic` (HTTP Basic Authentication against
     * BASIC_AUTH_USERS, realm AUTH_REALM) or `bearer` (a token of API_TOKENS, when it is set).
     * The auth plugin enforces it; the description page and the OpenAPI document show it.
     */
    auth?: 'basic' | 'bearer'
  }
  interface FastifyRequest {
    /** The user whose Basic credentials were verified; set on routes with `config.auth: 'basic'`. */
    authUser: AuthUser | null
  }
}

export const InvalidCredentials = createError('FST_BASIC_AUTH_INVALID_CREDENTIALS', 'Authorization: the user name or password is wrong for realm %s', 401)
export const MissingBearerToken = createError('FST_BEARER_AUTH_MISSING_OR_BAD_AUTHORIZATION_HEADER', 'Authorization: this endpoint needs a header "Bearer <token>"', 401)
export const InvalidBearerToken = createError('FST_BEARER_AUTH_INVALID_TOKEN', 'Authorization: the Bearer token is not valid', 401)
export const TooManyFailures = createError('FST_ERR_AUTH_RATE_LIMITED', 'Too many failed authentications from this address; retry in %s seconds', 429)

/**
 * Enforces the `config.auth` that routes declare. Its hook goes first in the route's onRequest
 * list: authentication precedes content negotiation (406/415) and validation (400). Failed
 * authentications are limited per client address (AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_MS).
 */
export default fp(async function auth (fastify) {
  const { AUTH_REALM, BASIC_AUTH_USERS, API_TOKENS, AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_MS } = fastify.config
  const basicChallenge = `Basic realm="${AUTH_REALM}"`
  const bearerChallenge = `Bearer realm="${AUTH_REALM}"`

  if (BASIC_AUTH_USERS === undefined) {
    fastify.log.warn('BASIC_AUTH_USERS is not set: every request to an endpoint behind Basic Authentication will be refused')
  }
  const verify = credentialsVerifier(BASIC_AUTH_USERS)

  fastify.decorateRequest('authUser', null)
  await fastify.register(basicAuth, {
    // The challenge is added below: the plugin's own adds `charset`, and the contract fixes the
    // exact value (docs/contract.md, "Authentication").
    authenticate: false,
    validate (user, password, request, _reply, done) {
      const authUser = verify(user, password)
      if (authUser === null) return done(new InvalidCredentials(AUTH_REALM))
      request.authUser = authUser
      done()
    }
  })
  const basicHook = fastify.basicAuth as onRequestHookHandler

  const checkBasic = (request: FastifyRequest, reply: FastifyReply) => new Promise<void>((resolve, reject) => {
    basicHook.call(fastify, request, reply, (err?: Error) => err === undefined ? resolve() : reject(err))
  })

  const matchToken = secretMatcher(API_TOKENS === undefined ? [] : API_TOKENS.split(','))
  const checkBearer = async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization)
    if (token === undefined) throw new MissingBearerToken()
    if (matchToken(token) === -1) throw new InvalidBearerToken()
  }

  // Failed authentications per client address (@fastify/rate-limit's counter), when
  // AUTH_FAILURE_LIMIT is set: a refusal counts when credentials were sent (a first request without
  // them is how a browser asks for the challenge). Once the limit is reached, the address gets 429
  // on every protected route until the window ends, before its credentials are looked at: a right
  // guess is refused too, so guessing faster gains nothing.
  const failures = AUTH_FAILURE_LIMIT > 0
    ? fastify.createRateLimit({ max: AUTH_FAILURE_LIMIT, timeWindow: AUTH_FAILURE_WINDOW_MS })
    : undefined

  /** Runs `check`; counts its refusals, and refuses at once an address over the limit. */
  async function limited (request: FastifyRequest, reply: FastifyReply, challenge: string, check: () => Promise<void>) {
    if (failures !== undefined) {
      const status = await failures(request, { increment: false })
      if (!status.isAllowed && status.remaining === 0) {
        reply.header('retry-after', status.ttlInSeconds)
        throw new TooManyFailures(status.ttlInSeconds)
      }
    }
    try {
      await check()
    } catch (err) {
      reply.header('www-authenticate', challenge)
      if (failures !== undefined && request.headers.authorization !== undefined) await failures(request)
      throw err
    }
  }
  const requireBasic = async function requireBasic (request: FastifyRequest, reply: FastifyReply) {
    await limited(request, reply, basicChallenge, () => checkBasic(request, reply))
  }
  const requireBearer = async function requireBearer (request: FastifyRequest, reply: FastifyReply) {
    await limited(request, reply, bearerChallenge, () => checkBearer(request))
  }

  const basicUnauthorized = unauthorizedResponse(basicChallenge, new InvalidCredentials(AUTH_REALM))
  const bearerUnauthorized = unauthorizedResponse(bearerChallenge, new InvalidBearerToken())
  fastify.addHook('onRoute', (route) => {
    const scheme = route.config?.auth
    // Without API_TOKENS the token header is ignored: the routes stay open.
    const hook = scheme === 'basic' ? requireBasic : scheme === 'bearer' && API_TOKENS !== undefined ? requireBearer : undefined
    if (hook === undefined) return
    addResponses(route.schema, { 401: scheme === 'basic' ? basicUnauthorized : bearerUnauthorized, ...(failures === undefined ? {} : { 429: TooManyResponse }) })
    // A new array: the GET route and its automatic HEAD route share the original one.
    route.onRequest = [hook, ...[route.onRequest ?? []].flat()] as typeof route.onRequest
  })
}, { name: 'auth', dependencies: ['config', 'rate-limits'] })
