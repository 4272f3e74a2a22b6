import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProductSchema } from '../../schemas/product.js'
import { collectionRoutes } from '../../lib/collection-routes.js'

/** /products: the product collection (docs/contract.md, Collections). Writes need a Bearer token when API_TOKENS is set. */
const products: FastifyPluginAsyncTypebox = async (fastify) => {
  const product = collectionRoutes({ item: ProductSchema, name: 'product', id: 'productid', repository: fastify.store.products, writeAuth: 'bearer' }, fastify)
  fastify.get('/', product.list)
  fastify.post('/', product.add)
  fastify.get('/:productid', product.view)
  fastify.put('/:productid', product.update)
  fastify.delete('/:productid', product.delete)
}

export default products
