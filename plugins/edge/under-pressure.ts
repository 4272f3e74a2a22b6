import createError from '@fastify/error'
import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { RETRY_AFTER_SECONDS } from '../../lib/errors.js'
import { UnavailableResponse, addResponses } from '../../schemas/common.js'

/** The 503 of an overloaded replica: its message is written for the client. */
class Overloaded extends createError('FST_UNDER_PRESSURE', 'The service is overloaded: retry later', 503) {
  expose = true
}

/**
 * Overload is an answer (@fastify/under-pressure): when the event loop lags or memory passes a
 * PRESSURE_* threshold, requests get 503 with Retry-After at once instead of queueing, and /ready
 * says so. Routes that must answer whatever the load (/health, /ready) set
 * `config.pressureHandler` to let themselves through.
 */
export const autoConfig = (fastify: FastifyInstance): FastifyUnderPressureOptions => ({
  maxEventLoopDelay: fastify.config.PRESSURE_MAX_EVENT_LOOP_DELAY,
  maxEventLoopUtilization: fastify.config.PRESSURE_MAX_EVENT_LOOP_UTILIZATION,
  maxHeapUsedBytes: fastify.config.PRESSURE_MAX_HEAP_USED_BYTES,
  maxRssBytes: fastify.config.PRESSURE_MAX_RSS_BYTES,
  retryAfter: RETRY_AFTER_SECONDS,
  customError: Overloaded
})

/**
 * process.memoryUsage() that never throws: libuv reads the RSS from /proc/self/stat, which fails
 * (EMFILE) when no descriptor is left, and under-pressure samples it in a timer without a catch,
 * which ended the process. A failed read answers the last good sample, and says so in the log.
 */
export function guardedMemoryUsage (read: typeof process.memoryUsage, log: { warn: (fields: object, msg: string) => void }): typeof process.memoryUsage {
  let last = read()
  return Object.assign(() => {
    try {
      last = read()
    } catch (err) {
      log.warn({ err }, 'memory use could not be read: the last sample stands')
    }
    return last
  }, { rss: read.rss })
}

/** The guard, installed once in the process (every app instance shares `process`). */
const guarded = new WeakSet<object>()

/** under-pressure, and the 503 it may answer documented on every route it may answer it on. */
export default fp<FastifyUnderPressureOptions>(async function overload (fastify, opts) {
  if (!guarded.has(process.memoryUsage)) {
    process.memoryUsage = guardedMemoryUsage(process.memoryUsage, fastify.log)
    guarded.add(process.memoryUsage)
  }
  fastify.addHook('onRoute', (route) => {
    const config = route.config as { pressureHandler?: unknown } | undefined
    if (config?.pressureHandler === undefined) addResponses(route.schema, { 503: UnavailableResponse })
  })
  await fastify.register(underPressure, opts)
}, { name: 'under-pressure', dependencies: ['config'] })
