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
  /** Each coding: its bytes once made, the promise of them while they are being made. */
  readonly #encoded = new Map<PreparedEncoding, Buffer | Promise<Buffer>>()

  constructor (text: string) {
    this.identity = Buffer.from(text, 'utf8')
  }

  /** The body in a content coding: made once, whoever asks first; the bytes themselves, no promise, once made. */
  encoded (encoding: PreparedEncoding): Buffer | Promise<Buffer> {
    let body = this.#encoded.get(encoding)
    if (body === undefined) {
      const made = ENCODERS[encoding](this.identity)
      this.#encoded.set(encoding, body = made.then((bytes) => {
        this.#encoded.set(encoding, bytes)
        return bytes
      }))
    }
    return body
  }
}
