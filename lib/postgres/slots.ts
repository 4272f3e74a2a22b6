import { storeUnavailable } from './unavailable.js'

/**
 * A number of connections that lists may hold at once: a list read by cursor holds its connection
 * as long as its client reads, so lists must not take the whole pool from the other requests (and
 * readiness). A list that finds none free within `timeoutMs` is a 503, as a wait for a connection is.
 */
export class Slots {
  #free: number
  readonly #timeoutMs: number
  readonly #waiting: Array<() => void> = []

  constructor (count: number, timeoutMs: number) {
    this.#free = count
    this.#timeoutMs = timeoutMs
  }

  /** Resolves with the function that gives the slot back (once), or rejects with the 503 after the timeout. */
  async take (): Promise<() => void> {
    if (this.#free > 0) {
      this.#free--
    } else {
      await new Promise<void>((resolve, reject) => {
        const granted = () => {
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(granted), 1)
          reject(storeUnavailable(new Error(`no database connection free for a list within ${this.#timeoutMs} ms`)))
        }, this.#timeoutMs)
        this.#waiting.push(granted)
      })
    }
    let given = false
    return () => {
      if (given) return
      given = true
      const next = this.#waiting.shift()
      if (next === undefined) this.#free++
      else next()
    }
  }
}
