import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { TooManyResponse, addResponses } from '../../schemas/common.js'
import { RateLimited } from '../../lib/error-codes.js'

/**
 * The global rate limit (@fastify/rate-limit), RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS
 * on every route but those with `config.rateLimit: false` (the probes), off by default (0). Per
 * client address: `request.ip`, which is the proxy's `X-Forwarded-For` only when TRUST_PROXY trusts
 * the proxy (else every client behind it is one address); an IPv6 address is counted by its /64
 * (the plugin's default `ipv6Subnet`), as plugins/auth.ts counts it. Refusals are 429 JSON errors
 * with `Retry-After`. Failed authentications have limits of their own (plugins/auth.ts).
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

/** @fastify/rate-limit, and the 429 of the global limit documented on every route it limits when it is on. */
export default fp<RateLimitPluginOptions>(async function rateLimits (fastify, opts) {
  if (opts.global === true) {
    fastify.addHook('onRoute', (route) => {
      if (route.config?.rateLimit !== false) addResponses(route.schema, { 429: TooManyResponse })
    })
  }
  await fastify.register(rateLimit, opts)
}, { name: 'rate-limit', dependencies: ['config'] })
