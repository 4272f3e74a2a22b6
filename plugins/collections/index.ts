import fp from 'fastify-plugin'
import { memoryStore } from '../../lib/memory/repository.js'
import type { Store } from '../../lib/repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    store: Store
  }
}

/**
 * The stores of the generic collections, a fresh one for every instance of the app. The
 * PostgreSQL store (and its driver) is loaded only when STORE (DATABASE_URL) asks for it.
 */
export default fp(async function collections (fastify) {
  const store = fastify.config.STORE === 'memory'
    ? memoryStore(fastify.config.COLLECTION_MAX_ITEMS)
    : await (await import('./postgres.js')).postgresStore(fastify)
  fastify.decorate('store', store)
}, { name: 'collections', dependencies: ['config'] })
