import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'

/** An id worth keeping: 1 to 128 visible ASCII characters (no spaces or controls; a repeated header, joined with ", ", is not one). */
const SANE_ID = /^[\x21-\x7e]{1,128}$/

/** This process's part of every id it makes: 96 random bits, drawn when the process starts (24 hex digits). */
const PROCESS_PART = randomBytes(12).toString('hex')
/** How many ids this process has made. */
let made = 0

/**
 * A new request id, `<process part>-<n>`: the process's random part and a counter, so that ids
 * never collide across processes, replicas and restarts (two processes draw the same 96 bits with
 * odds of about 1 in 10^28). A UUID for every request costs its random bytes and their formatting
 * (figures: bench/README.md); this costs a counter and one string. An id says which
 * process made it and how many it had made before: nothing about the request.
 */
export function newRequestId (): string {
  return `${PROCESS_PART}-${++made}`
}

/**
 * Server option `genReqId`: the request's `X-Request-Id` (set by the proxy or the client) when it
 * is sane, else a new id. Fastify logs it as the `reqId` of every line about the request.
 */
export function requestId (req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SANE_ID.test(given) ? given : newRequestId()
}
