import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { failureLimiter, type Client, type FailureStore } from '../../lib/auth-failures.js'
import { memoryFailureStore } from '../../lib/memory/auth-failures.js'

// The failed-login limiter and its stores as test/lib/auth-failures.test.ts and
// test/lib/memory/auth-failures.test.ts drive them: a clock of the test's, a check that says
// whether it ran.

export const MINUTE = 60_000
export const T0 = Date.UTC(2026, 0, 1)

/** A store whose every call first yields to the event loop, as a database's would: concurrent attempts interleave. */
export function slowStore (inner: FailureStore = memoryFailureStore()): FailureStore & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    async read (keys, now) {
      calls.push(`read ${keys.length}`)
      await yieldToLoop()
      return inner.read(keys, now)
    },
    async record (keys, now, windowMs) {
      calls.push(`record ${keys.length}`)
      await yieldToLoop()
      return inner.record(keys, now, windowMs)
    }
  }
}

export interface LimiterAtOptions { limit?: number, addressLimit?: number, networkLimit?: number, store?: FailureStore, waitMs?: number }

/**
 * A limiter (limits 3, 10 and 30 unless told) on a clock the test moves, with a check that says
 * whether it ran. `attempt` takes an address alone (a client without a network, as IPv4's) or the
 * client.
 */
export function limiterAt (options: LimiterAtOptions = {}) {
  const clock = { now: T0 }
  const limiter = failureLimiter({ store: memoryFailureStore(), limit: 3, addressLimit: 10, networkLimit: 30, windowMs: MINUTE, now: () => clock.now, ...options })
  let checks = 0
  const attempt = (client: string | Client, identity: string, right = false) =>
    limiter.attempt(typeof client === 'string' ? { address: client, network: undefined } : client, identity, () => {
      checks++
      return right ? identity : null
    })
  return { clock, limiter, attempt, checks: () => checks }
}
