import { addressGroup } from './client-address.js'
import { TooManyStreams } from './error-codes.js'
import { RETRY_AFTER_SECONDS, exposed } from './errors.js'

/**
 * The streamed answers (NDJSON, long lists: lib/pull-stream.ts) each client address has open, held
 * to STREAMS_PER_CLIENT. A stream holds its connection, a share of the kernel's socket memory
 * (its send buffer, up to net.ipv4.tcp_wmem's maximum when its client does not read) and what its
 * source holds (a database connection for a long list on PostgreSQL) for as long as its client
 * takes: without a cap, one client opening hundreds it never reads holds them all for free.
 *
 * Counted as plugins/auth.ts and the rate limit count (lib/client-address.ts): an IPv4 address as
 * it is, an IPv6 client by its /64. One process's count: each replica holds its own.
 */
export class StreamSlots {
  readonly #limit: number
  readonly #open = new Map<string, number>()

  /** `limit` streams per client address at once; 0: no limit (nothing is counted). */
  constructor (limit: number) {
    this.#limit = limit
  }

  /** Streams open from the address of `ip`. */
  openFrom (ip: string): number {
    return this.#open.get(addressGroup(ip)) ?? 0
  }

  /**
   * A slot for a stream to `ip`: the function that gives it back, once the stream is over (a second
   * call does nothing). Throws the 429 TooManyStreams, with Retry-After, when the address holds
   * as many as it may: a stream is refused before its status is sent, so that the client gets an
   * answer it can act on rather than a 200 cut short.
   */
  take (ip: string): () => void {
    if (this.#limit === 0) return () => {}
    const address = addressGroup(ip)
    const open = this.#open.get(address) ?? 0
    if (open >= this.#limit) {
      throw exposed(new TooManyStreams(this.#limit, RETRY_AFTER_SECONDS), { 'retry-after': String(RETRY_AFTER_SECONDS) })
    }
    this.#open.set(address, open + 1)
    let held = true
    return () => {
      if (!held) return
      held = false
      const left = (this.#open.get(address) as number) - 1
      if (left === 0) this.#open.delete(address)
      else this.#open.set(address, left)
    }
  }
}
