import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import createError from '@fastify/error'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import type { Config } from './config/schema.js'
import { projectRoot } from './project-root.js'
import { RETRY_AFTER_SECONDS, exposed } from './errors.js'
import type { RangeOrder } from './range/grammar.js'
import type { KeyedPage } from './range/keyed.js'
import { SHORT_LIST, StoredJson, itemOf, type Listed, type Listing, type Repository } from './repository.js'

// postgrator is an ES module only. It is require()d (Node loads an ES module that way) rather than
// imported, so that the production bundle, CommonJS, loads it from node_modules as tsc's dist/ does,
// its default export the class either way; esbuild leaves such a require alone.
const { default: Postgrator } = createRequire(path.join(import.meta.dirname, 'postgres.js'))('postgrator') as typeof import('postgrator')

const StoreUnavailableError = createError('FST_ERR_STORE_UNAVAILABLE', 'The database is unavailable: retry later', 503)

/**
 * The error of a request the database could not serve: 503 with `Retry-After`, a message that is
 * safe to show (`expose`), and the driver's error as its cause for the log.
 */
export function storeUnavailable (cause: unknown) {
  return exposed(new StoreUnavailableError({ cause }), { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

/**
 * Whether a driver error means the database cannot serve us now (503), rather than a fault of
 * ours (500): no SQLSTATE (refused, reset, timed out, terminated), or SQLSTATE class 08
 * (connection), 53 (insufficient resources), 57 (operator intervention: shutdown, statement
 * timeout) or 58 (system error).
 */
export function isUnavailable (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || /^(08|53|57|58)/.test(code)
}

/** What runs a query: the pool, or a connection taken from it. */
type Queryable = Pick<pg.ClientBase, 'query'>

/** Runs a query of a repository: the database's unavailability becomes a 503 error. */
export async function run<R extends pg.QueryResultRow> (db: pg.Pool | Queryable, query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  try {
    return await (db as Queryable).query<R>(query)
  } catch (err) {
    throw isUnavailable(err) ? storeUnavailable(err) : err
  }
}

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

/** A call waiting for its batch: its input, and how to settle it. */
interface Call<I, O> {
  input: I
  resolve: (output: O) => void
  reject: (err: unknown) => void
}

/** How a Batcher groups its calls. */
export interface BatchOptions<I> {
  /** The statements of this kind that may be in flight at once; the calls made meanwhile wait and go together. */
  concurrency: number
  /** The most calls in one statement. */
  maxCalls: number
  /** With `weight`: the most weight in one statement (a call heavier alone goes alone). */
  maxWeight?: number
  weight?: (input: I) => number
}

/**
 * Calls of one kind (reads by id, inserts) that go to the database together, as one statement:
 * those made while the event loop runs its callbacks leave at once, after them (setImmediate); while
 * `concurrency` statements are in flight, the next calls wait, and leave together when one ends.
 * Under load a statement serves many requests, and what a statement costs this process (the pool's
 * checkout, the driver's query, a write on the socket that wakes the server, the messages it
 * answers) is paid once for them all; alone, a call waits for no one. `run` answers the outputs
 * in the order of the inputs; its failure is every call's.
 */
export class Batcher<I, O> {
  readonly #run: (inputs: I[]) => Promise<O[]>
  readonly #options: BatchOptions<I>
  #pending: Array<Call<I, O>> = []
  #inFlight = 0
  #scheduled = false
  readonly #flush = () => {
    this.#scheduled = false
    this.#send()
  }

  constructor (run: (inputs: I[]) => Promise<O[]>, options: BatchOptions<I>) {
    this.#run = run
    this.#options = options
  }

  add (input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#pending.push({ input, resolve, reject })
      if (!this.#scheduled && this.#inFlight < this.#options.concurrency) {
        this.#scheduled = true
        setImmediate(this.#flush)
      }
    })
  }

  /** The next statements, while there are calls and room in flight. */
  #send (): void {
    while (this.#pending.length > 0 && this.#inFlight < this.#options.concurrency) {
      const batch = this.#pending.splice(0, this.#size())
      this.#inFlight++
      this.#run(batch.map((call) => call.input)).then((outputs) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(outputs[i] as O)
      }, (err: unknown) => {
        for (const call of batch) call.reject(err)
      }).finally(() => {
        this.#inFlight--
        this.#send()
      })
    }
  }

  /** How many of the pending calls the next statement takes: at least one. */
  #size (): number {
    const { maxCalls, maxWeight, weight } = this.#options
    const most = Math.min(maxCalls, this.#pending.length)
    if (weight === undefined || maxWeight === undefined) return most
    let count = 0
    for (let total = 0; count < most; count++) {
      total += weight(this.#pending[count]!.input)
      if (total > maxWeight && count > 0) break
    }
    return count
  }
}

/** The tables of the collections, created by migrations/. */
export type CollectionTable = 'users' | 'products'

/** A collection's size, kept by migrations/004's triggers in the transaction of every write (the sum of its 16 rows). */
const sizeOf = (table: CollectionTable) => `(SELECT coalesce(sum(size), 0)::bigint FROM collection_sizes WHERE collection = '${table}')`

/** A field name as the key expressions below write it into SQL. */
const FIELD = /^[a-z_][a-z0-9_]*$/

/**
 * The sort keys below read a field from an item's text without parsing it: PostgreSQL's json
 * operators refuse a whole item that holds `\u0000` or a lone surrogate anywhere (22P05, 22P02),
 * both valid JSON that the API accepts. The text is JSON.stringify's (create and replace): compact,
 * and `"<field>":` occurs once, where the field is (inside a string, a quote is escaped), provided
 * the item is a flat object of the schema's keys that always has the field, as a user is.
 */
function afterKey (field: string, opening: string): string {
  if (!FIELD.test(field)) throw new TypeError(`a sort key's field must be a plain name, not ${JSON.stringify(field)}`)
  const key = `"${field}":${opening}`
  return `substr(item::text, strpos(item::text, '${key}') + ${key.length})`
}

/** A sort key on an integer field: its digits, as a bigint (a safe integer fits). */
export function jsonIntegerKey (field: string): string {
  return `rtrim(split_part(${afterKey(field, '')}, ',', 1), '}')::bigint`
}

/**
 * A sort key on a string field whose order is UTF-16 code-unit order, exactly, as JavaScript's `<`
 * (docs/contract.md, The endpoints), under COLLATE "C" (UTF-8 bytes: code-point order). The two
 * differ only where code units are outside U+0002–U+D7FE and U+E000–U+FFFF: a character above
 * U+FFFF is two surrogates (D800–DFFF) in UTF-16, below U+E000, but above U+FFFF in code points; a
 * lone surrogate and U+0000 have no text form at all. So each code unit u becomes:
 * - u itself, for U+0002–U+D7FE and U+E000–U+FFFF (most strings are all of these, and used as they are);
 * - U+0001 U+0001 for U+0000, U+0001 U+0002 for U+0001;
 * - U+D7FF, then the character u − U+D7FE (1 to 0x801), for U+D7FF–U+DFFF.
 * Each unit's code is ordered as the units are, and no code is the start of another, so strings
 * compare as their units do. The value's escapes (`\"`, `\n`, `\u0000`, `\ud800`) are read as the
 * code units they stand for.
 */
export function jsonStringKey (field: string): string {
  const rest = afterKey(field, '"')
  // Up to the first quote: the whole value unless it holds an escape, which the slow path reads.
  const plain = `split_part(${rest}, '"', 1)`
  const value = `substring(${rest} FROM '^((?:[^"\\\\]|\\\\.)*)"')`
  const unit = `CASE WHEN u = 0 THEN chr(1) || chr(1) WHEN u = 1 THEN chr(1) || chr(2)
    WHEN u < 55295 OR u >= 57344 THEN chr(u) ELSE chr(55295) || chr(u - 55294) END`
  const codePoint = `CASE WHEN m.t[1] ~ '^\\\\u' THEN ('x' || substr(m.t[1], 3))::bit(16)::int
    WHEN m.t[1] ~ '^\\\\' THEN ascii(translate(substr(m.t[1], 2), 'bfnrt', chr(8) || chr(12) || chr(10) || chr(13) || chr(9)))
    ELSE ascii(m.t[1]) END`
  const units = `(SELECT coalesce(string_agg(${unit}, '' ORDER BY m.n, s.half), '')
    FROM regexp_matches(${value}, '\\\\u[0-9a-fA-F]{4}|\\\\.|.', 'g') WITH ORDINALITY AS m(t, n),
    LATERAL (SELECT ${codePoint} AS c) AS p,
    LATERAL unnest(CASE WHEN p.c < 65536 THEN ARRAY[p.c] ELSE ARRAY[55296 + ((p.c - 65536) >> 10), 56320 + ((p.c - 65536) & 1023)] END) WITH ORDINALITY AS s(u, half))`
  return `(CASE WHEN ${plain} !~ '[\\\\\\uD7FF\\U00010000-\\U0010FFFF]' THEN ${plain} ELSE ${units} END) COLLATE "C"`
}

/** Lists of at most this many items are read in one statement (a short list: lib/repository.ts, SHORT_LIST), the rest by cursor. */
export const PROBE_ROWS = SHORT_LIST
/** A cursor's fetches aim at about this much JSON text each (a list in memory is one fetch at a time). */
export const FETCH_BYTES = 64 * 1024
/** The most rows a fetch asks for, however small the items. */
const FETCH_MAX_ROWS = 4096

/** The items of a statement: the JSON texts written by the item schema's serializer (`canonical`) as they are, the others parsed. */
function entries<T> (texts: readonly string[] | null, canonical: ReadonlyArray<boolean | null> | null): Array<Listed<T>> {
  return (texts ?? []).map((text, i) => canonical?.[i] === true ? new StoredJson(text) : JSON.parse(text) as T)
}

/** A listing read whole by its first statement: nothing to release. */
function readListing<T> (items: ReadonlyArray<Listed<T>>, total: number, page: KeyedPage): Listing<T> {
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

/** An item schema's serializer, the one the API answers with, and the fingerprint of the schema. */
export interface ItemSerializer<T> {
  serialize: (item: T) => string
  fingerprint: string
}

/**
 * The serializer of an item schema: Fastify's compiler (fast-json-stringify) with the options of
 * the routes' (plugins/compile-later.ts), compiled on first use; the fingerprint changes with the
 * schema, so that the rows an older schema wrote are not taken for this one's.
 */
export function itemSerializer<T> (schema: TSchema): ItemSerializer<T> {
  let compiled: ((item: unknown) => string) | undefined
  return {
    fingerprint: createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 16),
    serialize: (item) => (compiled ??= SerializerSelector()({}, {})({ schema, method: 'GET', url: '/', httpStatus: '200' }) as (item: unknown) => string)(item)
  }
}

/**
 * A repository's sort keys (jsonIntegerKey, jsonStringKey); its item schema's serializer, which
 * writes the items it stores; and the connections its lists may hold at once.
 */
export interface PostgresRepositoryOptions<T> {
  sortKeys?: Readonly<Record<string, string>>
  /** Without one, items are stored as JSON.stringify writes them, in the order of their keys, and parsed to be listed. */
  serializer?: ItemSerializer<T>
  /** Unlimited (but by the pool) when not given. */
  slots?: Slots
  /** Prepare each statement once per connection, by name (true); false behind a transaction pooler (DATABASE_POOLER). */
  namedStatements?: boolean
  /**
   * The statements of reads by id, and of inserts, that may be in flight at once (Batcher): the
   * calls made meanwhile go together in the next. 2 when not given.
   */
  batchConcurrency?: number
}

/** The most reads by id in one statement. */
export const READ_BATCH = 256
/** The most inserts in one statement, and their most JSON text (a larger item is inserted alone). */
export const INSERT_BATCH = 64
export const INSERT_BATCH_CHARACTERS = 256 * 1024

/** Where a page of ids starts when the Range has no value: before every id, in the order asked. */
const UNBOUNDED = { asc: Number.MIN_SAFE_INTEGER, desc: Number.MAX_SAFE_INTEGER }

/** The first and last ids of a page and whether it is full, as KeyedPage has them (no key for what is absent). */
function pageOf (first: number | undefined, last: number | undefined, full: boolean): KeyedPage {
  return first === undefined || last === undefined ? { full: false } : { first, last, full }
}

/**
 * A collection in a PostgreSQL table `(id bigint identity, item json, serialized_by text)`: ids
 * from the identity's sequence (unique across every replica, increasing, never reused, even after a
 * rolled-back insert), items stored as the JSON text of the validated body. `json`, not `jsonb`:
 * the text is kept as written, and a `\u0000` escape (valid JSON, which jsonb refuses) is stored
 * like any other. Every write is one statement, so it is atomic; prepared once per connection.
 * Reads by id, inserts and short lists made together share a statement (Batcher): what a statement
 * costs this process, more than all the rest of such a request, is then paid once for many.
 *
 * With the item schema's serializer, the text is what the API answers for the item, and
 * `serialized_by` the schema's fingerprint: a list, or a read by id (`entry`), sends such an item
 * as it is (StoredJson), without parsing and serializing it again, which was most of a list's
 * work. An item stored otherwise (JSON.stringify's key order: by an older version, by another
 * schema, the sample users of migrations/002) is parsed.
 *
 * A listing's first statement reads a short list (PROBE_ROWS) whole: one snapshot, no
 * transaction; with its size, from collection_sizes (migrations/004), when a sort or a page needs
 * it. A longer list is read by a cursor in a REPEATABLE READ transaction (CursorListing), its size
 * read in it: the count sent before the first item is the number of items sent, whatever is
 * written meanwhile.
 * A page by id costs O(log n + offset + limit) on the primary key; a sorted list is sorted by
 * PostgreSQL (the key expressions above), never in this process.
 */
export function postgresRepository<T> (pool: pg.Pool, table: CollectionTable, { sortKeys = {}, serializer, slots, namedStatements = true, batchConcurrency = 2 }: PostgresRepositoryOptions<T> = {}): Repository<T> {
  // Named by table and serializer: repositories of one table with other serializers can share a pool.
  // A named statement is prepared once per connection; behind a transaction pooler the next use may
  // be on another server connection, which never saw it, so there they go unnamed.
  const tag = `${table}-${serializer?.fingerprint ?? 'json'}`
  const statement = (name: string, text: string) => namedStatements
    ? (values: unknown[] = []) => ({ name: `${tag}-${name}`, text, values })
    : (values: unknown[] = []) => ({ text, values })
  const replace = statement('replace', `UPDATE ${table} SET item = $2, serialized_by = $3 WHERE id = $1`)
  const remove = statement('delete', `DELETE FROM ${table} WHERE id = $1`)
  const size = sizeOf(table)
  // The fingerprint is hexadecimal: written into the statements as it is.
  const canonical = serializer === undefined ? 'false' : `coalesce(serialized_by = '${serializer.fingerprint}', false)`
  const textOf = (item: T) => serializer === undefined ? JSON.stringify(item) : serializer.serialize(item)
  const by = serializer?.fingerprint ?? null

  // Reads by id, and inserts, go in batches (Batcher): one statement for the calls made together.
  // The ids as one array parameter, so the statement is the same whatever their number (prepared
  // once); each row says its id, and an id asked twice is answered twice. The text is read as it is
  // stored (`item::text`, not parsed by the driver): a canonical one is what the API answers.
  const getMany = statement('get-many', `SELECT id::text AS id, item::text AS item, ${canonical} AS canonical FROM ${table} WHERE id = ANY($1::bigint[])`)
  const reads = new Batcher<number, Listed<T> | undefined>(async (ids) => {
    const { rows } = await run<{ id: string, item: string, canonical: boolean }>(pool, getMany([ids]))
    const found = new Map(rows.map((row) => [Number(row.id), row]))
    return ids.map((id) => {
      const row = found.get(id)
      return row === undefined ? undefined : row.canonical ? new StoredJson(row.item) : JSON.parse(row.item) as T
    })
  }, { concurrency: batchConcurrency, maxCalls: READ_BATCH })
  // One INSERT of every item of a batch, in one transaction (each request's write is still atomic,
  // and none is acknowledged before the statement commits). Which new row holds which item: RETURNING
  // names no input, and PostgreSQL does not promise to answer in the order of the SELECT, so each
  // row comes back with its text, stored exactly as sent (json), and goes to a call that sent that
  // text; calls that sent the same text have items alike, and may take either id.
  const createMany = statement('create-many', `INSERT INTO ${table} (item, serialized_by)
    SELECT t.item::json, $2 FROM unnest($1::text[]) WITH ORDINALITY AS t(item, n) ORDER BY t.n RETURNING id::text AS id, item::text AS item`)
  const inserts = new Batcher<string, number>(async (texts) => {
    const { rows } = await run<{ id: string, item: string }>(pool, createMany([texts, by]))
    const ids = new Map<string, number[]>()
    for (const row of rows) {
      const same = ids.get(row.item)
      if (same === undefined) ids.set(row.item, [Number(row.id)])
      else same.push(Number(row.id))
    }
    return texts.map((text) => {
      const id = ids.get(text)?.shift()
      if (id === undefined) throw new Error(`the insert into ${table} answered no row for an item it was given`)
      return id
    })
  }, { concurrency: batchConcurrency, maxCalls: INSERT_BATCH, maxWeight: INSERT_BATCH_CHARACTERS, weight: (text) => text.length })

  function keyOf (sortBy: string): string {
    const key = sortKeys[sortBy]
    if (key === undefined) throw new TypeError(`the ${table} repository has no sort key ${JSON.stringify(sortBy)}`)
    return key
  }

  /**
   * The answer of a statement without parameters, read once for every call made together
   * (Batcher), as lists asked for at the same time are: they share one snapshot, taken after each
   * of them was asked, and so holding every write acknowledged before. Each call makes its own items.
   */
  const sharedReads = new Map<string, Batcher<null, pg.QueryResult>>()
  function shared<R extends pg.QueryResultRow> (query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    let reads = sharedReads.get(query.text)
    if (reads === undefined) {
      reads = new Batcher(async (calls) => {
        const result = await run(pool, query)
        return calls.map(() => result)
      }, { concurrency: batchConcurrency, maxCalls: Number.POSITIVE_INFINITY })
      sharedReads.set(query.text, reads)
    }
    return reads.add(null) as Promise<pg.QueryResult<R>>
  }

  /**
   * The first statement of a whole list in id order: its first PROBE_ROWS + 1 items, which are all
   * of a short list (one statement: the number read is its size).
   */
  const firstRows = statement('first-rows', `SELECT item::text AS item, ${canonical} AS canonical FROM ${table} ORDER BY id LIMIT ${PROBE_ROWS + 1}`)
  /**
   * The first statement of a sorted list: its size, and its items when there are at most
   * PROBE_ROWS (else none: the sort of a long list is not started twice).
   */
  const sortedProbes = new Map<string, ReturnType<typeof statement>>()
  function sortedProbe (sortBy: string) {
    let found = sortedProbes.get(sortBy)
    if (found === undefined) {
      found = statement(`probe-${sortBy}`, `SELECT ${size} AS total, array_agg(t.item ORDER BY t.k, t.id) AS items,
          array_agg(t.canonical ORDER BY t.k, t.id) AS canonical
        FROM (SELECT id, item::text AS item, ${canonical} AS canonical, ${keyOf(sortBy)} AS k FROM ${table}
          WHERE ${size} <= ${PROBE_ROWS} ORDER BY k, id LIMIT ${PROBE_ROWS}) t`)
      sortedProbes.set(sortBy, found)
    }
    return found
  }

  const inOrder = (order: RangeOrder) => order === 'asc'
    ? { from: 'id >= $1', by: 'id', end: 'max(id)' }
    : { from: 'id <= $1', by: 'id DESC', end: 'min(id)' }
  /** A page's size and ids and items, up to PROBE_ROWS + 1 of them ($1 start, $2 offset, $3 limit). */
  const pageProbes = {
    asc: statement('page-asc', pageProbe('asc')),
    desc: statement('page-desc', pageProbe('desc'))
  }
  function pageProbe (order: RangeOrder): string {
    const { from, by } = inOrder(order)
    return `SELECT ${size} AS total, array_agg(t.id ORDER BY t.${by}) AS ids, array_agg(t.item ORDER BY t.${by}) AS items,
        array_agg(t.canonical ORDER BY t.${by}) AS canonical
      FROM (SELECT id, item::text AS item, ${canonical} AS canonical FROM ${table} WHERE ${from}
        ORDER BY ${by} OFFSET $2 LIMIT least($3::bigint, ${PROBE_ROWS + 1})) t`
  }
  /** A long page's size, first id, last id when it is full, and last id of all ($1 start, $2 offset, $3 limit). */
  const pageBounds = {
    asc: statement('bounds-asc', boundsOf('asc')),
    desc: statement('bounds-desc', boundsOf('desc'))
  }
  function boundsOf (order: RangeOrder): string {
    const { from, by, end } = inOrder(order)
    return `SELECT ${size} AS total,
      (SELECT id FROM ${table} WHERE ${from} ORDER BY ${by} OFFSET $2 LIMIT 1) AS first,
      (SELECT id FROM ${table} WHERE ${from} ORDER BY ${by} OFFSET $2::bigint + $3::bigint - 1 LIMIT 1) AS last,
      (SELECT ${end} FROM ${table} WHERE ${from}) AS "end"`
  }

  /**
   * A listing by cursor: a slot and a connection, a REPEATABLE READ transaction, `bounds` read in
   * it, then the cursor `list` that `declare` gives for them (none: an empty page, nothing to read).
   */
  async function byCursor (
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

  return {
    async listing ({ sortBy, page } = {}) {
      if (page !== undefined) {
        const { order, offset, limit } = page
        const values = [page.start ?? UNBOUNDED[order], offset, limit]
        const row = (await run<{ total: string, ids: string[] | null, items: string[] | null, canonical: boolean[] | null }>(pool, pageProbes[order](values))).rows[0]!
        const ids = (row.ids ?? []).map(Number)
        if (ids.length <= PROBE_ROWS || limit <= PROBE_ROWS + 1) {
          return readListing(entries<T>(row.items, row.canonical), Number(row.total), pageOf(ids[0], ids.at(-1), ids.length === limit))
        }
        return byCursor(pageBounds[order](values), (bounds) => ({
          total: Number(bounds.total),
          page: pageOf(bounds.first === null ? undefined : Number(bounds.first), Number(bounds.last ?? bounds.end), bounds.last !== null)
        }), ({ first, last }) => first === undefined || last === undefined
          ? undefined
          : {
              text: `DECLARE list NO SCROLL CURSOR FOR SELECT item::text AS item, ${canonical} AS canonical FROM ${table}
                WHERE id BETWEEN $1 AND $2 ORDER BY ${inOrder(order).by}`,
              values: [Math.min(first, last), Math.max(first, last)]
            })
      }
      if (sortBy === undefined) {
        const { rows } = await shared<{ item: string, canonical: boolean }>(firstRows())
        if (rows.length <= PROBE_ROWS) return readListing(entries<T>(rows.map((row) => row.item), rows.map((row) => row.canonical)), rows.length, { full: false })
      } else {
        const row = (await shared<{ total: string, items: string[] | null, canonical: boolean[] | null }>(sortedProbe(sortBy)())).rows[0]!
        const total = Number(row.total)
        if (total <= PROBE_ROWS) return readListing(entries<T>(row.items, row.canonical), total, { full: false })
      }
      const order = sortBy === undefined ? 'id' : `${keyOf(sortBy)}, id`
      return byCursor({ text: `SELECT ${size} AS total` }, (bounds) => ({ total: Number(bounds.total), page: { full: false } }), () => ({
        text: `DECLARE list NO SCROLL CURSOR FOR SELECT item::text AS item, ${canonical} AS canonical FROM ${table} ORDER BY ${order}`
      }))
    },
    async get (id) {
      const found = await reads.add(id)
      return found === undefined ? undefined : itemOf(found)
    },
    entry (id) {
      return reads.add(id)
    },
    async create (item) {
      return inserts.add(textOf(item))
    },
    async replace (id, item) {
      return (await run(pool, replace([id, textOf(item), by]))).rowCount === 1
    },
    async delete (id) {
      return (await run(pool, remove([id]))).rowCount === 1
    }
  }
}

/**
 * The URL with every password in it masked, to name the database in messages and logs: the one
 * before the host, and any query parameter that holds one (`?password=`, `sslpassword=`).
 */
export function redactedUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    for (const name of [...parsed.searchParams.keys()]) {
      if (/pass/i.test(name)) parsed.searchParams.set(name, '***')
    }
    // URLSearchParams writes the mask percent-encoded.
    return parsed.toString().replaceAll('%2A%2A%2A', '***')
  } catch {
    return 'the database of DATABASE_URL'
  }
}

/**
 * A connection of its own for start-up, to `url` (DATABASE_URL by default), retried while
 * `config.DATABASE_STARTUP_TIMEOUT` lasts.
 */
export async function connectWithRetries (config: Config, log: Pick<FastifyBaseLogger, 'warn'>, url = config.DATABASE_URL!): Promise<pg.Client> {
  const deadline = Date.now() + config.DATABASE_STARTUP_TIMEOUT
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(delay * 2, 2000)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: config.DATABASE_STATEMENT_TIMEOUT })
    try {
      await client.connect()
      return client
    } catch (err) {
      const reason = (err as Error).message
      if (Date.now() + delay > deadline) {
        throw new Error(`The database at ${redactedUrl(url)} is unreachable (attempts: ${attempt}): ${reason}`, { cause: err })
      }
      log.warn({ database: redactedUrl(url), attempt, reason }, 'database not reachable yet: retrying')
      await sleep(delay)
    }
  }
}

/** Any number will do, as long as nothing else locks it: "servant!" in ASCII. */
const MIGRATION_LOCK = 0x73657276616e7421n

/** postgrator on `client`'s database, with the migrations of migrations/. */
async function migrator (client: pg.Client) {
  const { rows } = await client.query<{ database: string }>('SELECT current_database() AS database')
  return new Postgrator({
    migrationPattern: path.join(projectRoot, 'migrations', '*.sql'),
    driver: 'pg',
    database: rows[0]!.database,
    schemaTable: 'schemaversion',
    execQuery: (query) => client.query(query)
  })
}

/**
 * Released migrations whose comments were reworded, with the checksum of the text a database may
 * have run: that record, and only that one, is carried forward to the file's present checksum
 * before postgrator compares them (a file that changed in any other way is still refused).
 * migrations/README.md says why and when.
 */
export const REWORDED_MIGRATIONS: ReadonlyMap<number, string> = new Map([
  [1, 'a02be7b547f492bb5b30560d31ee3631'],
  [2, '211b014cba20f4f0283a6382ed814f5f']
])

/** The records of REWORDED_MIGRATIONS' former texts, set to the files' checksums (postgrator's). */
async function carryRewordedChecksums (client: pg.Client, postgrator: Awaited<ReturnType<typeof migrator>>): Promise<void> {
  const { rows } = await client.query<{ exists: boolean }>('SELECT to_regclass(\'schemaversion\') IS NOT NULL AS exists')
  if (!rows[0]!.exists) return
  for (const migration of await postgrator.getMigrations()) {
    const former = REWORDED_MIGRATIONS.get(migration.version)
    if (former === undefined || migration.action !== 'do' || migration.md5 === undefined) continue
    await client.query('UPDATE schemaversion SET md5 = $1 WHERE version = $2 AND md5 = $3', [migration.md5, migration.version, former])
  }
}

/**
 * Brings the database to the latest schema of migrations/ (postgrator, numbered SQL files), in one
 * transaction under a transaction-scoped advisory lock: replicas that start together apply each
 * migration once, the others wait and find nothing left to do, and a failed migration leaves
 * nothing half-applied. Nothing outlives the transaction (no session lock, no SET), so it runs as
 * well through a transaction-pooling PgBouncer, which keeps a transaction on one server connection.
 */
export async function migrate (client: pg.Client, log: Pick<FastifyBaseLogger, 'info'>): Promise<void> {
  const postgrator = await migrator(client)
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await carryRewordedChecksums(client, postgrator)
    const applied = await postgrator.migrate()
    await client.query('COMMIT')
    for (const { version, name } of applied) log.info({ version, name }, 'database migration applied')
  } catch (err) {
    await client.query('ROLLBACK')
    throw err
  }
}

/** The database's migration version, and the latest of migrations/: equal when it is up to date. */
export async function schemaVersions (client: pg.Client): Promise<{ database: number, latest: number }> {
  const postgrator = await migrator(client)
  const [database, latest] = await Promise.all([postgrator.getDatabaseVersion(), postgrator.getMaxVersion()])
  return { database: Number(database ?? 0), latest: Number(latest) }
}

/** The database is not at the schema this version of the service needs: the migrations must run first. */
export const SchemaBehind = createError('FST_ERR_SCHEMA_BEHIND', 'The database is at migration %s; this version needs %s: apply the migrations first (`node dist/bundle/server.js migrate`, or MIGRATE_ON_START=true)', 500)

/**
 * The database of `config` made ready for the service at start-up: migrated with
 * DATABASE_MIGRATION_URL (else DATABASE_URL) when MIGRATE_ON_START, else checked to be at the
 * latest migration, so that a replica never serves an older schema than its code needs.
 */
export async function prepareDatabase (config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<void> {
  const migrating = config.MIGRATE_ON_START
  const client = await connectWithRetries(config, log, migrating ? config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL : config.DATABASE_URL)
  try {
    if (migrating) {
      await migrate(client, log)
      return
    }
    const { database, latest } = await schemaVersions(client)
    if (database < latest) throw new SchemaBehind(database, latest)
  } finally {
    await client.end()
  }
}

/** No database to migrate: neither DATABASE_MIGRATION_URL nor DATABASE_URL is set. */
export const NoDatabase = createError('FST_ERR_NO_DATABASE', 'No database to migrate: set DATABASE_MIGRATION_URL or DATABASE_URL', 500)

/**
 * The migrations of migrations/ applied to the database of DATABASE_MIGRATION_URL (else
 * DATABASE_URL), reached with retries as at start-up: the release step's command. Answers the
 * database's migration version after.
 */
export async function migrateDatabase (config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<number> {
  const url = config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL
  if (url === undefined) throw new NoDatabase()
  const client = await connectWithRetries(config, log, url)
  try {
    await migrate(client, log)
    return (await schemaVersions(client)).database
  } finally {
    await client.end()
  }
}
