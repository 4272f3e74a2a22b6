import type pg from 'pg'
import type { RangeOrder } from '../range/grammar.js'
import type { KeyedPage } from '../range/keyed.js'
import { CollectionFull } from '../error-codes.js'
import { StoredJson, itemOf, type Listed, type Repository } from '../repository.js'
import { Batcher } from './batcher.js'
import type { ItemSerializer } from './item-serializer.js'
import { PROBE_ROWS, cursorListing, entries, readListing } from './listings.js'
import type { Slots } from './slots.js'
import { run } from './unavailable.js'

/** The tables of the collections, created by migrations/. */
export type CollectionTable = 'users' | 'products'

/** A collection's size, kept by migrations/004's triggers in the transaction of every write (the sum of its 16 rows). */
const sizeOf = (table: CollectionTable) => `(SELECT coalesce(sum(size), 0)::bigint FROM collection_sizes WHERE collection = '${table}')`

/**
 * A repository's sort keys (lib/postgres/sort-keys.ts); its item schema's serializer, which
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
  /** The ceiling of items (COLLECTION_MAX_ITEMS), held across replicas (migrations/005); 0 or not given: none. */
  maxItems?: number
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
 * Under a ceiling (`maxItems`), an insert takes the collection's advisory lock until it commits
 * (migrations/005): inserts of one collection, from every replica, commit one at a time, and none
 * passes the ceiling.
 * Reads by id, inserts and short lists made together share a statement (Batcher): what a statement
 * costs this process, more than all the rest of such a request, is then paid once for many.
 *
 * With the item schema's serializer, the text is what the API answers for the item, and
 * `serialized_by` the schema's fingerprint: a list, or a read by id (`entry`), sends such an item
 * as it is (StoredJson), spared the parse and the serialization that would be most of a list's
 * work. An item stored otherwise (JSON.stringify's key order: by an older version, by another
 * schema, the sample users of migrations/002) is parsed.
 *
 * A listing's first statement reads a short list (PROBE_ROWS) whole: one snapshot, no
 * transaction; with its size, from collection_sizes (migrations/004), when a sort or a page needs
 * it. A longer list is read by a cursor in a REPEATABLE READ transaction (lib/postgres/listings.ts),
 * its size read in it: the count sent before the first item is the number of items sent, whatever
 * is written meanwhile.
 * A page by id costs O(log n + offset + limit) on the primary key; a sorted list is sorted by
 * PostgreSQL (the key expressions of lib/postgres/sort-keys.ts), never in this process.
 */
export function postgresRepository<T> (pool: pg.Pool, table: CollectionTable, { sortKeys = {}, serializer, slots, namedStatements = true, batchConcurrency = 2, maxItems = 0 }: PostgresRepositoryOptions<T> = {}): Repository<T> {
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
  // text; calls that sent the same text have items alike, and may take either id. Under a ceiling,
  // the batch's first items up to the collection's room (migrations/005, which holds the
  // collection's lock until the commit): the others get no row, and no id (CollectionFull).
  const createMany = maxItems > 0
    ? statement('create-bounded', `INSERT INTO ${table} (item, serialized_by)
      SELECT t.item::json, $2 FROM unnest($1::text[]) WITH ORDINALITY AS t(item, n) ORDER BY t.n
      LIMIT collection_room('${table}', $3) RETURNING id::text AS id, item::text AS item`)
    : statement('create-many', `INSERT INTO ${table} (item, serialized_by)
      SELECT t.item::json, $2 FROM unnest($1::text[]) WITH ORDINALITY AS t(item, n) ORDER BY t.n RETURNING id::text AS id, item::text AS item`)
  const inserts = new Batcher<string, number | undefined>(async (texts) => {
    const { rows } = await run<{ id: string, item: string }>(pool, createMany(maxItems > 0 ? [texts, by, maxItems] : [texts, by]))
    const ids = new Map<string, number[]>()
    for (const row of rows) {
      const same = ids.get(row.item)
      if (same === undefined) ids.set(row.item, [Number(row.id)])
      else same.push(Number(row.id))
    }
    return texts.map((text) => {
      const id = ids.get(text)?.shift()
      if (id === undefined && maxItems === 0) throw new Error(`the insert into ${table} answered no row for an item it was given`)
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
        return cursorListing<T>(pool, slots, pageBounds[order](values), (bounds) => ({
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
      return cursorListing<T>(pool, slots, { text: `SELECT ${size} AS total` }, (bounds) => ({ total: Number(bounds.total), page: { full: false } }), () => ({
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
      const id = await inserts.add(textOf(item))
      if (id === undefined) throw new CollectionFull(maxItems)
      return id
    },
    async replace (id, item) {
      return (await run(pool, replace([id, textOf(item), by]))).rowCount === 1
    },
    async delete (id) {
      return (await run(pool, remove([id]))).rowCount === 1
    }
  }
}
