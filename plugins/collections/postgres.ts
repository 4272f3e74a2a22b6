import fastifyPostgres from '@fastify/postgres'
import type { FastifyInstance } from 'fastify'
import { connectionParameters, redactedUrl } from '../../lib/postgres/connect.js'
import { itemSerializer } from '../../lib/postgres/item-serializer.js'
import { prepareDatabase } from '../../lib/postgres/migrations.js'
import { postgresRepository } from '../../lib/postgres/repository.js'
import { Slots } from '../../lib/postgres/slots.js'
import { jsonIntegerKey, jsonStringKey } from '../../lib/postgres/sort-keys.js'
import { run } from '../../lib/postgres/unavailable.js'
import type { Store } from '../../lib/repository.js'
import { ProductSchema, type Product } from '../../schemas/product.js'
import { UserSchema, type User } from '../../schemas/user.js'

/**
 * The PostgreSQL store of DATABASE_URL: reached (with retries) and migrated before the service
 * starts (or, with MIGRATE_ON_START=false, checked to be migrated), then a pool (@fastify/postgres)
 * shared by the repositories. Queries and waits for a
 * connection are bounded by DATABASE_STATEMENT_TIMEOUT; a lost database makes requests fail with
 * 503 until it is back, when new connections are made as they are needed. A long list holds a
 * connection while its client reads it (lib/postgres/listings.ts): lists leave two of the pool to
 * the rest.
 */
export async function postgresStore (fastify: FastifyInstance): Promise<Store> {
  const { config, log } = fastify
  await prepareDatabase(config, log)

  const timeout = config.DATABASE_STATEMENT_TIMEOUT
  // Behind a transaction pooler, a connection's parameters and prepared statements do not follow
  // the client from one transaction to the next (PgBouncer refuses statement_timeout when
  // connecting): the client-side query_timeout still bounds every query. It stays without a pooler
  // too: statement_timeout cannot fire when the server hangs or the network drops silently, and
  // then only the client's bound ends the wait (with a 503). Its cost, a timer armed and cleared per
  // statement, is a statement's, not a request's: reads by id, inserts and short lists made together
  // share one (lib/postgres/batcher.ts).
  await fastify.register(fastifyPostgres, {
    connectionString: config.DATABASE_URL,
    max: config.DATABASE_POOL_SIZE,
    connectionTimeoutMillis: timeout,
    // The same parameters as start-up's trial connection, which stops the start when a pooler refuses them.
    ...connectionParameters(config),
    query_timeout: timeout,
    keepAlive: true,
    application_name: 'servant-example-api'
  })
  const pool = fastify.pg.pool
  // An idle connection that breaks (the database restarted) is dropped by the pool; without a
  // listener its error would end the process.
  pool.on('error', (err) => log.warn({ err }, 'an idle database connection failed'))
  log.info({ database: redactedUrl(config.DATABASE_URL!) }, 'using the PostgreSQL store')

  // Named statements are prepared on a server connection, which a transaction pooler does not keep.
  const namedStatements = config.DATABASE_POOLER !== 'transaction'
  // Lists leave two connections to everything else: a write, a read by id, readiness.
  const slots = new Slots(Math.max(1, config.DATABASE_POOL_SIZE - 2), timeout)
  return {
    users: postgresRepository(pool, 'users', {
      sortKeys: { age: jsonIntegerKey('age'), name: jsonStringKey('name') },
      serializer: itemSerializer<User>(UserSchema),
      slots,
      namedStatements,
      maxItems: config.COLLECTION_MAX_ITEMS
    }),
    products: postgresRepository(pool, 'products', { serializer: itemSerializer<Product>(ProductSchema), slots, namedStatements, maxItems: config.COLLECTION_MAX_ITEMS }),
    async check () {
      await run(pool, { text: 'SELECT 1' })
    }
  }
}
