import { Type } from '@sinclair/typebox'
import { UnavailableResponse, errorResponses } from './common.js'

/** The body of a file: bytes of the media type its extension says. */
const FILE = {
  type: 'string',
  format: 'binary',
  // static/hello.txt, the sample file of the project's static area.
  examples: ['Hello from the static area.\n']
}

const StaticParams = Type.Object({
  '*': Type.String({ description: 'The path of the file inside the static area, slashes included.', examples: ['hello.txt'] })
})

/** The request headers @fastify/static reads: conditional requests and byte ranges. */
const StaticRequestHeaders = Type.Object({
  Range: Type.Optional(Type.String({ description: 'One byte range, `bytes=<first>-[<last>]` or `bytes=-<suffix>`; several ranges get the whole file.', examples: ['bytes=0-3', 'bytes=-5', 'bytes=100000-'] })),
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags of the copies the client has: 304 when one is current.', examples: ['*'] })),
  'If-Modified-Since': Type.Optional(Type.String({ description: 'An HTTP date: 304 when the file has not changed since.', examples: ['Sun, 22 Nov 2026 18:53:37 GMT'] }))
})

const CACHE_HEADERS = {
  ETag: Type.String({ description: 'A weak validator of the file\'s size and modification time.' }),
  'Last-Modified': Type.String({ description: 'When the file last changed, an HTTP date.' }),
  'Cache-Control': Type.Literal('public, max-age=0'),
  'Accept-Ranges': Type.Literal('bytes')
}
const FileHeaders = Type.Object(CACHE_HEADERS)
const PartialHeaders = Type.Object({
  ...CACHE_HEADERS,
  'Content-Range': Type.String({ description: '`bytes <first>-<last>/<size>`', examples: ['bytes 0-3/28'] })
})

/**
 * The schema of `GET /static/*`, @fastify/static's route (which takes none of its own): for the
 * description page and the OpenAPI document.
 */
export const StaticFileRouteSchema = {
  summary: 'A file of the static area',
  description: 'The file at this path inside STATIC_DIR, with ETag and Last-Modified; ' +
    'If-None-Match / If-Modified-Since → 304; one byte range → 206 (416 when it is past the end). ' +
    'A missing file, a directory, a dot-file or a path leaving the directory → 404.',
  params: StaticParams,
  headers: StaticRequestHeaders,
  response: {
    200: { ...FILE, description: 'The file, its Content-Type by its extension.', headers: FileHeaders },
    206: { ...FILE, description: 'The bytes of the range asked for.', headers: PartialHeaders },
    304: { description: 'Not Modified: the copy the client has is current. An empty body.', type: 'null', headers: FileHeaders },
    // 413: a body sent along, which no route of it takes (plugins/negotiation.ts).
    ...errorResponses(400, 404, 413, 416),
    // Overload refuses it like any route; the overload plugin's hook ran before this schema existed.
    503: UnavailableResponse
  }
}
