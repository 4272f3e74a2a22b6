import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'

/** An id worth keeping: 1 to 128 visible ASCII characters (no spaces or controls; a repeated header, joined with ", ", is not one). */
const SANE_ID = /^[\x21-\x7e]{1,128}$/

/**
 * Server option `genReqId`: the request's `X-Request-Id` (set by the proxy or the client) when it
 * is sane, else a new UUID, so that ids never collide across processes and replicas. Fastify
 * logs it as the `reqId` of every line about the request.
 */
export function requestId (req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID()
}
