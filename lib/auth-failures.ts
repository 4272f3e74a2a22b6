import { createHash } from 'node:crypto'

/** The failures counted for a key in its current window. */
export interface FailureCount {
  failures: number
  /** When the window ends (ms since the epoch): the count is forgotten then, not before. */
  resetAt: number
}

/**
 * Where failed authentications are counted: this process's memory (lib/memory/auth-failures.ts),
 * or a database table that every replica shares (lib/postgres/auth-failures.ts). Fixed windows: a
 * key's first failure opens a window of `windowMs`, and the count lives until that window ends (a
 * lock is never evicted sooner: that would give a guesser its budget back; see memoryFailureStore
 * for the counts under their limit). Times come from the caller's clock.
 */
export interface FailureStore {
  /** The counts of these keys whose window is still open at `now`; a key without one is absent. */
  read (keys: readonly string[], now: number): Promise<Map<string, FailureCount>>
  /** One more failure for each key; a key whose window has ended (or that has none) opens one. */
  record (keys: readonly string[], now: number, windowMs: number): Promise<void>
  /**
   * For a store with a ceiling: undefined if a failure of these keys can be counted now (room for
   * the keys it adds, and for the locks it makes), else when room is expected (ms since the
   * epoch). Asked in the same turn of the event loop as the failure is recorded, so that no other
   * attempt takes the room in between.
   */
  fullUntil? (keys: readonly string[], now: number): number | undefined
}

/** What became of an attempt to authenticate. */
export type Attempt<T> =
  | { outcome: 'accepted', value: T }
  /** The credentials were checked and refused: counted. */
  | { outcome: 'refused' }
  /** Over a limit: refused before the credentials were looked at, and not counted. */
  | { outcome: 'limited', scope: 'user' | 'address' | 'network', retryAfter: number }
  /** An earlier attempt of the same user from the same address did not finish in `waitMs`. */
  | { outcome: 'busy' }
  /** The store had no room to count a failure of these keys: refused before the credentials were looked at. */
  | { outcome: 'full', retryAfter: number }

export interface LimiterOptions {
  store: FailureStore
  /** Failures per (address, identity) per window; 0: no such limit. */
  limit: number
  /** Failures per address over every identity per window; 0: no such limit. */
  addressLimit: number
  /** Failures per network (lib/client-address.ts's networkGroup) over its addresses per window; 0: no such limit. */
  networkLimit: number
  windowMs: number
  /** The clock, in ms since the epoch; by default `Date.now()`, read at each call. */
  now?: () => number
  /** How long an attempt waits for an earlier one of the same key before it gives up ('busy'). */
  waitMs?: number
}

/** Where a client's attempts come from: lib/client-address.ts's groups of its address. */
export interface Client {
  /** The address (addressGroup): an IPv4 address, an IPv6 /64. */
  address: string
  /** The network of the address (networkGroup): an IPv6 /48; none for IPv4. */
  network: string | undefined
}

/** The starts of the keys of failureLimiter's counts: an identity's from an address, an address's, a network's. */
const IDENTITY_KEY = 'identity '
const ADDRESS_KEY = 'address '
const NETWORK_KEY = 'network '

/** How a store with a ceiling is to treat failureLimiter's keys (memoryFailureStore's options). */
export interface KeyPolicy {
  /** Whether a key with this many failures is a lock: at or over its limit. */
  isLock: (key: string, failures: number) => boolean
  /**
   * Which counts under their limit are evicted first: the lower the tier, the sooner. An
   * identity's count (0) forgives at most AUTH_FAILURE_LIMIT failures when it is forgotten, an
   * address's (1) the address's ceiling, a network's (2) the ceiling of 65,536 /64s: the counts
   * that bound the most guesses are forgotten last.
   */
  tier: (key: string) => number
}

/** failureLimiter's keys for a store with a ceiling. A key of a limit that is off is never counted. */
export function keyPolicy ({ limit, addressLimit, networkLimit }: Pick<LimiterOptions, 'limit' | 'addressLimit' | 'networkLimit'>): KeyPolicy {
  const tier = (key: string) => key.startsWith(NETWORK_KEY) ? 2 : key.startsWith(ADDRESS_KEY) ? 1 : 0
  const limits = [limit, addressLimit, networkLimit]
  return { isLock: (key, failures) => failures >= (limits[tier(key)] as number), tier }
}

/** A key of fixed length whatever was sent: a 10 kB user name costs what a short one does. */
const hashed = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22)

/** Seconds from `now` until `resetAt`, at least 1: what Retry-After says. */
const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000))

/**
 * Limits failed authentications per (client address, identity), per client address and per
 * network, where the identity is what the credentials claim to be (a Basic user name, a Bearer
 * token) and the address and network are lib/client-address.ts's groups. Over the first limit,
 * that identity is refused from that address before its credentials are looked at, the right ones
 * included: were the right password let through, the guess that found it would be answered like a
 * success, and guessing would not be slowed at all. Other identities from the address are not
 * affected, so one guesser behind a NAT does not lock out the other users behind it. Over the
 * second limit (far above one user's mistakes), the address is refused whatever it claims: the
 * ceiling for a guesser that tries many user names, and the bound on the keys one address adds to
 * the store. Over the third (an IPv6 /48's, far above one address's), every address of the network
 * is refused: the ceiling for a guesser that takes a new /64 whenever one is refused, and the
 * bound on the keys one network adds to the store (two per failure at most, and its own).
 *
 * Counts are read before the check and written after it, so concurrent attempts could all be
 * checked against the same count. To hold the limits anyway, the attempts of one identity from one
 * address are checked one at a time (in this process), and an attempt still being checked counts
 * against the address's and the network's ceilings as if it would fail. Replicas on one store do
 * not see each other's attempts in flight: in one burst, the limit per identity may be passed by
 * one attempt per other replica, a ceiling by what the other replicas admit at once; never more
 * than one window's worth per replica.
 *
 * An attempt that is within the limits but whose failure the store has no room to count ('full':
 * memoryFailureStore keeps room for counts, not for locks) is refused before its credentials are
 * looked at, the right ones included, as while a database cannot give the counts: a failure that
 * cannot be counted would be a guess for free. The limits come first, so a client the store holds
 * is still answered by its counts.
 */
export function failureLimiter ({ store, limit, addressLimit, networkLimit, windowMs, now = () => Date.now(), waitMs = Infinity }: LimiterOptions) {
  const enabled = limit > 0 || addressLimit > 0 || networkLimit > 0
  /** The end of the queue of each key that has attempts being checked. */
  const queues = new Map<string, Promise<void>>()
  /** How many attempts are being checked against each ceiling's key. */
  const inFlight = new Map<string, number>()

  /** Resolves once the attempts of `key` queued before this one have ended (true), or after `waitMs` (false). */
  function enqueue (key: string): { turn: Promise<boolean>, done: () => void } {
    const previous = queues.get(key) ?? Promise.resolve()
    let done!: () => void
    const mine = new Promise<void>((resolve) => { done = resolve })
    const tail = previous.then(() => mine)
    queues.set(key, tail)
    // Forgotten once every attempt queued so far has ended, one that gave up waiting included.
    tail.then(() => { if (queues.get(key) === tail) queues.delete(key) })
    if (waitMs === Infinity) return { turn: previous.then(() => true), done }
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, waitMs, false) })
    const turn = Promise.race([previous.then(() => true), timedOut]).finally(() => clearTimeout(timer))
    return { turn, done }
  }

  return {
    /** Whether any limit is on (else `attempt` only runs the check). */
    enabled,

    /** The keys it holds for attempts being checked: none once they have ended, whatever they were. */
    get held () { return queues.size + inFlight.size },

    /**
     * Runs `check` (null: the credentials are refused) for credentials that claim `identity`, sent
     * by `client`, within the limits; counts a refusal. The store's errors are thrown.
     */
    async attempt<T> (client: Client, identity: string, check: () => T | null): Promise<Attempt<T>> {
      if (!enabled) {
        const value = check()
        return value === null ? { outcome: 'refused' } : { outcome: 'accepted', value }
      }
      const identityKey = `${IDENTITY_KEY}${client.address} ${hashed(identity)}`
      // The ceilings over every identity, the narrower first: its Retry-After is the one that says more.
      const ceilings = ([
        { scope: 'address', key: `${ADDRESS_KEY}${client.address}`, ceiling: addressLimit },
        { scope: 'network', key: `${NETWORK_KEY}${client.network}`, ceiling: client.network === undefined ? 0 : networkLimit }
      ] as const).filter(({ ceiling }) => ceiling > 0)
      const keys = [...(limit > 0 ? [identityKey] : []), ...ceilings.map(({ key }) => key)]

      const { turn, done } = enqueue(identityKey)
      try {
        if (!await turn) return { outcome: 'busy' }
        const othersInFlight = ceilings.map(({ key }) => inFlight.get(key) ?? 0)
        for (const [i, { key }] of ceilings.entries()) inFlight.set(key, othersInFlight[i] as number + 1)
        try {
          const counts = await store.read(keys, now())
          const time = now()
          const forIdentity = counts.get(identityKey)
          // Asked only with a limit: without one, the store has no count of it to give.
          if (forIdentity !== undefined && forIdentity.failures >= limit) {
            return { outcome: 'limited', scope: 'user', retryAfter: secondsUntil(forIdentity.resetAt, time) }
          }
          for (const [i, { scope, key, ceiling }] of ceilings.entries()) {
            const count = counts.get(key)
            if ((count?.failures ?? 0) + (othersInFlight[i] as number) >= ceiling) {
              // Over the ceiling only if the attempts in flight fail: they are decided in a moment.
              const retryAfter = count !== undefined && count.failures >= ceiling ? secondsUntil(count.resetAt, time) : 1
              return { outcome: 'limited', scope, retryAfter }
            }
          }
          // Nothing runs between this question and the record below: the room cannot be taken meanwhile.
          const fullUntil = store.fullUntil?.(keys, time)
          if (fullUntil !== undefined) return { outcome: 'full', retryAfter: secondsUntil(fullUntil, time) }
          const value = check()
          if (value !== null) return { outcome: 'accepted', value }
          await store.record(keys, now(), windowMs)
          return { outcome: 'refused' }
        } finally {
          for (const { key } of ceilings) {
            const left = (inFlight.get(key) as number) - 1
            if (left === 0) inFlight.delete(key)
            else inFlight.set(key, left)
          }
        }
      } finally {
        done()
      }
    }
  }
}
