import type pg from 'pg'
import type { KeyedPage } from '../range/keyed.js'
import { SHORT_LIST, StoredJson, type Listed, type Listing } from '../repository.js'
import type { Slots } from './slots.js'
import { isUnavailable, run, storeUnavailable } from './unavailable.js'

/** Lists of at most this many items are read in one statement (a short list: lib/repository.ts, SHORT_LIST), the rest by cursor. */
export const PROBE_ROWS = SHORT_LIST
/** A cursor's fetches aim at about this much JSON text each (a list in memory is one fetch at a time). */
export const FETCH_BYTES = 64 * 1024
/** The most rows a fetch asks for, however small the items. */
const FETCH_MAX_ROWS = 4096

/** The items of a statement: the JSON texts written by the item schema's serializer (`canonical`) as they are, the others parsed. */
export function entries<T> (texts: readonly string[] | null, canonical: ReadonlyArray<boolean | null> | null): Array<Listed<T>> {
  return (texts ?? []).map((text, i) => canonical?.[i] === true ? new StoredJson(text) : JSON.parse(text) as T)
}

/** A listing read whole by its first statement: nothing to release. */
export function readListing<T> (items: ReadonlyArray<Listed<T>>, total: number, page: KeyedPage): Listing<T> {
  let closed = false
  return {
    ...page,
    total,
    items,
    async * [Symbol.asyncIterator] () {
      if (!closed && items.length > 0) yield items
    },
    async close () { closed = true }
  }
}

/**
 * A listing read by a cursor, in a REPEATABLE READ transaction on a connection of its own: one
 * snapshot for the size and every item, however long the client takes. Each fetch asks for about
 * FETCH_BYTES of items, from the size of the items fetched so far. Closing ends the transaction and
 * gives the connection (and its slot) back (`release`, given the error of a connection that
 * failed, which is then destroyed rather than reused).
 */
class CursorListing<T> implements Listing<T> {
  readonly total: number
  readonly first?: number
  readonly last?: number
  readonly full: boolean
  readonly #client: pg.PoolClient
  readonly #release: (failure?: unknown) => void
  #closed = false
  #failed: unknown
  #fetching: Promise<unknown> = Promise.resolve()
  #closing: Promise<void> | undefined

  constructor (client: pg.PoolClient, release: (failure?: unknown) => void, total: number, page: KeyedPage) {
    this.#client = client
    this.#release = release
    this.total = total
    this.full = page.full
    if (page.first !== undefined) this.first = page.first
    if (page.last !== undefined) this.last = page.last
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<ReadonlyArray<Listed<T>>> {
    let rows = PROBE_ROWS
    try {
      while (!this.#closed) {
        const fetched = run<{ item: string, canonical: boolean }>(this.#client, { text: `FETCH ${rows} FROM list` })
        this.#fetching = fetched.catch(() => {})
        let result
        try {
          result = await fetched
        } catch (err) {
          this.#failed = err
          throw err
        }
        if (this.#closed) return
        const texts = result.rows.map((row) => row.item)
        const asked = rows
        if (texts.length > 0) {
          const length = texts.reduce((sum, text) => sum + text.length, 0)
          rows = Math.max(1, Math.min(FETCH_MAX_ROWS, Math.floor(FETCH_BYTES * texts.length / length)))
          yield entries<T>(texts, result.rows.map((row) => row.canonical))
        }
        if (texts.length < asked) return
      }
    } finally {
      await this.close()
    }
  }

  close (): Promise<void> {
    this.#closing ??= this.#end()
    return this.#closing
  }

  async #end (): Promise<void> {
    this.#closed = true
    await this.#fetching
    let failure = this.#failed
    if (failure === undefined) {
      try {
        await this.#client.query('COMMIT')
      } catch (err) {
        failure = err
      }
    }
    this.#release(failure)
  }
}

/**
 * A listing by cursor: a slot of `slots` (when given) and a connection of `pool`, a REPEATABLE READ
 * transaction, `bounds` read in it, then the cursor `list` that `declare` gives for them (none: an
 * empty page, nothing to read).
 */
export async function cursorListing<T> (
  pool: pg.Pool,
  slots: Slots | undefined,
  bounds: pg.QueryConfig,
  read: (row: Record<string, string | null>) => { total: number, page: KeyedPage },
  declare: (page: KeyedPage) => pg.QueryConfig | undefined
): Promise<Listing<T>> {
  const giveBack = slots === undefined ? () => {} : await slots.take()
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    giveBack()
    throw isUnavailable(err) ? storeUnavailable(err) : err
  }
  // A connection that fails while the list holds it (the server ends the session) says so here,
  // not as an uncaught 'error' event; its queries fail, and it is destroyed when released.
  let broken: unknown
  const onError = (err: Error) => { broken = err }
  client.on('error', onError)
  const release = (failure?: unknown) => {
    client.off('error', onError)
    client.release((failure ?? broken) as Error | undefined)
    giveBack()
  }
  try {
    await run(client, { text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' })
    const { total, page } = read((await run<Record<string, string | null>>(client, bounds)).rows[0]!)
    const listing = new CursorListing<T>(client, release, total, page)
    const cursor = declare(page)
    if (cursor === undefined) {
      await listing.close()
      return readListing([], total, page)
    }
    await run(client, cursor)
    return listing
  } catch (err) {
    // The transaction goes with the connection.
    release(err)
    throw err
  }
}
