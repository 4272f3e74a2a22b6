import fp from 'fastify-plugin'
import { rangeable, type RangeableCollection, type RangeableOptions, type RangeField } from '../lib/range/rangeable.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Indexes `items` once by each rangeable field, for routes that page them by the Range
     * header (docs/contract.md, "Pages of /colors"). Call it at registration; the collection does not change afterwards.
     */
    rangeable: <Item>(items: readonly Item[], fields: Readonly<Record<string, RangeField<Item>>>, options?: RangeableOptions) => RangeableCollection<Item>
  }
}

/** `fastify.rangeable`: lib/range/rangeable.ts, for the routes. */
export default fp(async function range (fastify) {
  fastify.decorate('rangeable', rangeable)
}, { name: 'range' })
