import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProductSchema } from '../../schemas/product.js'
import { collectionRoutes } from '../../lib/collection-routes.js'

/** /products: the product collection (docs/contract.md, Collections). Writes need a Bearer token when API_TOKENS is set. */
const products: FastifyPluginAsyncTypebox = async (fastify) => {
  collectionRoutes(fastify, {
    item: ProductSchema,
    name: 'product',
    id: 'productid',
    repository: fastify.store.products,
    writeAuth: 'bearer'
  })
}

export default products
