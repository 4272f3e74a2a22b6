import { Type, type Static } from '@sinclair/typebox'
import { Name, SafeInteger } from './common.js'

/** A product of the /products collection (docs/contract.md, Collections); the collection's id is not one of its fields. */
export const ProductSchema = Type.Object({
  productId: SafeInteger(),
  name: Type.Optional(Name())
}, { $id: 'Product', examples: [{ productId: 1797, name: 'Apple pie' }] })

export type Product = Static<typeof ProductSchema>
