// Retries: the calls the server asks to repeat later (429, 503, with or without Retry-After) and
// those that got no answer, when sending them twice does no harm. The choices, and why, are in
// the service's docs/client.md ("Retries").

/** How a client retries: `createApiClient({ retry })`, and a call's own `retry`. */
export interface RetryOptions {
  /** Tries in all, the first included (3 by default; 1: no retry). */
  attempts?: number | undefined
  /** The backoff before the first retry, in milliseconds (500 by default), doubled at each retry, with jitter. */
  delay?: number | undefined
  /**
   * The longest wait, in milliseconds (30,000 by default): the backoff grows no further, and a
   * Retry-After asking more is not waited for (the call answers that 429 or 503 at once).
   */
  maxDelay?: number | undefined
}

/** `true`: retry as the client does (its options, else the defaults); `false`: never; options: with these. */
export type Retry = boolean | RetryOptions

export type RetryPolicy = Required<{ [K in keyof RetryOptions]: number }>

/** The statuses that ask for a later try: too many requests, and the service unavailable for now. */
const RETRIED_STATUSES = [429, 503]

/** The methods whose call may be sent twice without harm (idempotent, RFC 9110): a POST or a PATCH only when its call says so. */
const IDEMPOTENT = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']

const options = (retry: Retry | undefined): RetryOptions => typeof retry === 'object' ? retry : {}

/**
 * The retries of a call of `method`: the call's own `retry` over the client's; none when the
 * call says `false`, nor for a method that is not idempotent unless the call asks for them.
 */
export function retryPolicy (client: Retry | undefined, call: Retry | undefined, method: string): RetryPolicy | undefined {
  if (call === false || (call === undefined && (client === undefined || client === false || !IDEMPOTENT.includes(method)))) return undefined
  const [own, base] = [options(call), options(client)]
  return {
    attempts: own.attempts ?? base.attempts ?? 3,
    delay: own.delay ?? base.delay ?? 500,
    maxDelay: own.maxDelay ?? base.maxDelay ?? 30_000
  }
}

/**
 * The seconds an answer's Retry-After asks to wait: delta-seconds, or an HTTP-date (RFC 9110)
 * from `now`; undefined when it has none, or none that reads.
 */
export function retryAfter (response: Response, now = Date.now()): number | undefined {
  // Headers already strip the spaces around a value.
  const text = response.headers.get('retry-after') ?? ''
  if (/^\d+$/.test(text)) return Number(text)
  const date = / GMT$/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}

/**
 * The milliseconds to wait before the next try, once `tries` were made and the last one answered
 * `response` (undefined: no answer came), or undefined to stop there: the attempts are spent, the
 * status asks for no retry, or its Retry-After asks more than `maxDelay`. The wait is the backoff
 * (`delay` doubled at each retry, at most `maxDelay`) with equal jitter (from half of it to all of
 * it, `random` in [0, 1) placing it), and never less than the Retry-After.
 */
export function nextWait (policy: RetryPolicy, tries: number, response: Response | undefined, random = Math.random()): number | undefined {
  if (tries >= policy.attempts || (response !== undefined && !RETRIED_STATUSES.includes(response.status))) return undefined
  const backoff = Math.min(policy.maxDelay, policy.delay * 2 ** (tries - 1))
  const jittered = backoff * (1 + random) / 2
  const asked = response === undefined ? undefined : retryAfter(response)
  if (asked === undefined) return jittered
  return asked * 1000 > policy.maxDelay ? undefined : Math.max(asked * 1000, jittered)
}

/**
 * Waits `ms` by the client's clock, `performance.now()`, never less (a timer may fire a
 * millisecond early by it: then it waits again for the rest); rejects with the signal's reason
 * when it aborts, at once.
 */
export async function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  const until = performance.now() + ms
  for (let left = ms; left > 0; left = until - performance.now()) {
    await new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted()
      const abort = () => {
        clearTimeout(timer)
        reject(signal?.reason)
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', abort)
        resolve()
      }, Math.ceil(left))
      signal?.addEventListener('abort', abort, { once: true })
    })
  }
}
