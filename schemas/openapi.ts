import { Type } from '@sinclair/typebox'
import { packageInfo } from '../lib/package-info.js'

/** The document's shape; the handler sends it as prepared bytes (lib/prepared-body.ts), which Fastify sends as they are. */
export const OpenApiDocumentSchema = Type.Unsafe<Uint8Array>(Type.Object({
  openapi: Type.String(),
  info: Type.Object({ title: Type.String(), version: Type.String() }, { additionalProperties: true }),
  paths: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }))
}, {
  additionalProperties: true,
  description: 'An OpenAPI 3.1 document',
  examples: [{
    openapi: '3.1.0',
    info: { title: packageInfo.name, version: packageInfo.version },
    paths: { '/position/{x}/{y}': { get: { summary: 'The position (x, y).' } } }
  }]
}))
