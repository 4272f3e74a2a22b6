import { createHash } from 'node:crypto'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { TSchema } from '@sinclair/typebox'

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
