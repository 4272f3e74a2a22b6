import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { REQUEST_ID_ATTRIBUTE } from '../../../lib/tracing.js'

// An OTLP/HTTP endpoint of a test's own, for the tests of the spans the service exports
// (otel.test.ts, otel-spans.test.ts, test/system/otel.test.ts): what they receive is what a
// collector would. Below it, what otel.test.ts and its system counterpart both send and read.

/** A span as an OTLP/HTTP JSON export carries it, its attributes and its resource's decoded. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status: { code?: number, message?: string }
  resource: Record<string, unknown>
  scope: string
  /** Its events: their names and attributes, decoded. */
  events: Array<{ name: string, attributes: Record<string, unknown> }>
  /** The span as exported, whole (its events and status included). */
  text: string
}

/** OTLP's span kinds. */
export const SERVER = 2
export const CLIENT = 3

/** An OTLP AnyValue (JSON encoding) as a plain value. */
function anyValue (value: Record<string, any>): unknown {
  if ('stringValue' in value) return value.stringValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return value.doubleValue
  if ('boolValue' in value) return value.boolValue
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue)
  return value
}

const attributes = (list: Array<{ key: string, value: Record<string, any> }> = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, anyValue(value)]))

/**
 * A collector of the test's own: a node:http server taking OTLP/HTTP JSON exports on /v1/traces.
 * `mode`: 'ok' answers 200; 'fail' refuses every export (400); 'hang' reads it and never answers.
 */
export async function otlpReceiver (t: Test) {
  const spans: ReceivedSpan[] = []
  const held: http.ServerResponse[] = []
  const received = { requests: 0, contentTypes: new Set<string>(), paths: new Set<string>() }
  let mode: 'ok' | 'fail' | 'hang' = 'ok'
  const server = http.createServer((req, res) => {
    received.requests++
    received.contentTypes.add(String(req.headers['content-type']))
    received.paths.add(String(req.url))
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (mode === 'hang') {
        held.push(res)
        return
      }
      if (mode === 'fail') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"refused by the test"}')
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributes(resourceSpans.resource?.attributes)
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              status: span.status ?? {},
              resource,
              scope: scopeSpans.scope?.name,
              events: (span.events ?? []).map((event: { name: string, attributes?: Array<{ key: string, value: Record<string, any> }> }) => ({ name: event.name, attributes: attributes(event.attributes) })),
              text: JSON.stringify(span)
            })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const res of held) res.destroy()
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    received,
    held,
    get mode () { return mode },
    set mode (value: typeof mode) { mode = value },
    /** The spans of one trace. */
    trace: (traceId: string) => spans.filter((span) => span.traceId === traceId),
    /** Answers the exports held by 'hang' (200, as 'ok' would have, their spans dropped). */
    release () {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    }
  }
}

/** A user to POST /users. */
export const USER = { name: 'Ada Lovelace', age: 36, email: 'ada@engine.org', registration_date: '1843-07-01' }
/** A caller's trace and span, as its traceparent sends them. */
export const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
export const CALLER_SPAN_ID = 'b7ad6b7169203331'

/** The log lines of one request, by its id. */
export const linesOf = (entries: Array<Record<string, unknown>>, reqId: string) => entries.filter((entry) => entry.reqId === reqId)

/** The spans under `root` as an indented tree: a line per span, its kind and the attributes worth reading. */
export function tree (spans: readonly ReceivedSpan[], root: ReceivedSpan, depth = 0): string[] {
  const shown = ['http.route', 'http.request.method', 'http.response.status_code', REQUEST_ID_ATTRIBUTE, 'db.system.name', 'db.namespace', 'db.operation.name', 'db.query.text']
  const fields = shown.filter((key) => key in root.attributes).map((key) => `${key}=${JSON.stringify(root.attributes[key])}`)
  const kind = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'][root.kind]
  const line = `${'  '.repeat(depth)}${root.name} (${kind}) ${fields.join(' ')}`.trimEnd()
  const children = spans.filter((span) => span.parentSpanId === root.spanId)
  return [line, ...children.flatMap((child) => tree(spans, child, depth + 1))]
}
