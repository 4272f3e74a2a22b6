import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import createError from '@fastify/error'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { TooManyResponse, addResponses } from '../../schemas/common.js'

export const RateLimited = createError('FST_ERR_RATE_LIMITED', 'Too many requests from this address: at most %s in %s seconds; retry in %s seconds', 429)

/**
 * Rate limits (@fastify/rate-limit), per client address: `request.ip`, which is the proxy's
 * `X-Forwarded-For` only when TRUST_PROXY trusts the proxy (else every client behind it is one
 * address). The global limit, RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS on every route,
 * is off by default (0). The plugin also gives `fastify.createRateLimit`, which plugins/auth.ts
 * uses for the limit on failed authentications. Refusals are 429 JSON errors with `Retry-After`.
 */
export const autoConfig = (fastify: FastifyInstance): RateLimitPluginOptions => {
  const { RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS } = fastify.config
  return {
    global: RATE_LIMIT_MAX > 0,
    max: RATE_LIMIT_MAX,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    errorResponseBuilder: (_request, context) => new RateLimited(context.max, RATE_LIMIT_WINDOW_MS / 1000, Math.ceil(context.ttl / 1000))
  }
}

/** @fastify/rate-limit, and the 429 of the global limit documented on every route when it is on. */
export default fp<RateLimitPluginOptions>(async function rateLimits (fastify, opts) {
  if (opts.global === true) fastify.addHook('onRoute', (route) => { addResponses(route.schema, { 429: TooManyResponse }) })
  await fastify.register(rateLimit, opts)
}, { name: 'rate-limits', dependencies: ['config'] })
