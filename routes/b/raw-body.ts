import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { errorCodes } from 'fastify'

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes

/** A request as it comes off the socket (an IncomingMessage): its headers and its body stream. */
export type RawRequest = Readable & { headers: IncomingHttpHeaders }

/**
 * Reads a request body that Fastify did not parse (it never parses bodies of GET requests), with
 * Content-Length or chunked. The same errors as Fastify's own body reader: 413 over `limit` bytes
 * (refused from Content-Length alone when it says so), 400 when the bytes received differ from
 * Content-Length or the stream fails. No body is the empty buffer. Refused as too large, the
 * body is read no further.
 */
export function readRawBody (request: RawRequest, limit: number): Promise<Buffer> {
  const declared = request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length'])
  if (declared !== undefined && declared > limit) return Promise.reject(new FST_ERR_CTP_BODY_TOO_LARGE())
  // Already read to the end by someone else: nothing is left to read (and 'end' will not come again).
  if (request.readableEnded) return Promise.resolve(Buffer.alloc(0))

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0

    const stop = () => {
      request.removeListener('data', onData)
      request.removeListener('end', onEnd)
      request.removeListener('error', onError)
    }
    function onData (chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      received += bytes.length
      if (received > limit) {
        // The rest of the body is not read: the 413 closes the connection (plugins/errors.ts).
        stop()
        request.pause()
        reject(new FST_ERR_CTP_BODY_TOO_LARGE())
        return
      }
      chunks.push(bytes)
    }
    function onEnd () {
      stop()
      if (declared !== undefined && received !== declared) reject(new FST_ERR_CTP_INVALID_CONTENT_LENGTH())
      else resolve(Buffer.concat(chunks, received))
    }
    function onError (err: Error & { statusCode?: number }) {
      stop()
      reject(Object.assign(err, { statusCode: err.statusCode ?? 400 }))
    }

    request.on('data', onData)
    request.on('end', onEnd)
    request.on('error', onError)
    request.resume()
  })
}
