import { promisify } from 'node:util'
import zlib from 'node:zlib'

/** The content codings a prepared body is offered in, in the order of preference @fastify/compress has (plugins/edge/compress.ts). */
export const PREPARED_ENCODINGS = ['br', 'gzip', 'deflate'] as const
export type PreparedEncoding = typeof PREPARED_ENCODINGS[number]

const brotli = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)
const deflate = promisify(zlib.deflate)

/** Each coding at its best ratio within a few tens of milliseconds for a megabyte: it is paid once. */
const ENCODERS: Record<PreparedEncoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => gzip(body, { level: 9 }),
  deflate: (body) => deflate(body, { level: 9 })
}

/**
 * A body that is the same for every request (the OpenAPI document), prepared once: its bytes, and
 * each content coding of them made the first time a client asks for it (in the thread pool, not
 * on the event loop), then kept. Every answer sends the same Buffer, so that answers waiting for
 * their clients share one copy, and none is serialised or compressed again.
 */
export class PreparedBody {
  readonly identity: Buffer
  readonly #encoded = new Map<PreparedEncoding, Promise<Buffer>>()

  constructor (text: string) {
    this.identity = Buffer.from(text, 'utf8')
  }

  /** The body in a content coding: made once, whoever asks first. */
  encoded (encoding: PreparedEncoding): Promise<Buffer> {
    let body = this.#encoded.get(encoding)
    if (body === undefined) this.#encoded.set(encoding, body = ENCODERS[encoding](this.identity))
    return body
  }
}
