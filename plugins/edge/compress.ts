import zlib from 'node:zlib'
import compress, { type FastifyCompressOptions } from '@fastify/compress'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** @fastify/compress's compressible types (text, JSON, XML, octet-stream), and NDJSON. */
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)(?:x-nd)?json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)|octet-stream(?:;|$)/

/**
 * Response compression (@fastify/compress) for the clients that accept it, when COMPRESSION is on
 * (turn it off when the reverse proxy compresses): Brotli, gzip or deflate, for bodies of 1 kB or
 * more (the description page, Swagger UI's assets, long lists); small answers are sent as they are.
 *
 * Streams are compressed too, and flushed at every chunk the stream writes: an NDJSON line that
 * has been produced reaches the client without waiting for the compressor to fill a block (once
 * the stream's first 10 bytes are there: the plugin looks at them to tell whether they are
 * compressed already).
 * zstd is left out (it is flushed differently). Request bodies are not decompressed:
 * the API takes plain bodies only.
 */
export const autoConfig: FastifyCompressOptions = {
  globalDecompression: false,
  encodings: ['br', 'gzip', 'deflate'],
  customTypes: COMPRESSIBLE,
  zlibOptions: { flush: zlib.constants.Z_SYNC_FLUSH },
  brotliOptions: {
    flush: zlib.constants.BROTLI_OPERATION_FLUSH,
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 }
  }
}

/** Registered only with COMPRESSION on: off, not even its per-route hooks remain. */
export default fp<FastifyCompressOptions>(async function compression (fastify: FastifyInstance, options) {
  if (fastify.config.COMPRESSION) await fastify.register(compress, options)
}, { name: 'compress', dependencies: ['config'] })
