import fs from 'node:fs'
import zlib from 'node:zlib'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { isJson } from '../../lib/media-types.js'

/** What a response is made of, wherever it was received (inject, fetch). */
export interface ReceivedResponse {
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  /** The body as text; empty for HEAD and for no body. */
  body: string
}

/**
 * The text of a body as the server wrote it: decompressed when it went out with a
 * Content-Encoding (compression is the transport's, not the document's).
 */
export function bodyText (headers: ReceivedResponse['headers'], raw: Buffer): string {
  const encoding = headers['content-encoding']
  const bytes = encoding === 'br'
    ? zlib.brotliDecompressSync(raw)
    : encoding === 'gzip' ? zlib.gunzipSync(raw) : encoding === 'deflate' ? zlib.inflateSync(raw) : raw
  return bytes.toString('utf8')
}

interface Media { schema?: object, 'x-itemSchema'?: object, encoding?: object }
interface Header { required?: boolean, schema?: { type?: string } }
interface Response { headers?: Record<string, Header>, content?: Record<string, Media> }
interface Operation { responses: Record<string, Response> }
type Document = { paths: Record<string, Record<string, Operation>> }

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1')
const INTEGER = /^[+-]?\d+$/

/** The operation of a request: its path template matched (literal paths first), the trailing slash ignored. */
function operationMatcher (document: Document) {
  const templates = Object.keys(document.paths)
    .map((template) => {
      const names: string[] = []
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_match, name: string) => {
        names.push(name)
        // The static area's file path may hold slashes; every other capture is one segment.
        return name === 'path' ? '(.+)' : '([^/]+)'
      })
      return { template, names, pattern: new RegExp(`^${source}$`) }
    })
    .sort((a, b) => a.names.length - b.names.length)
  return (method: string, url: string) => {
    const path = (url.split('?', 1)[0] as string).replace(/(.)\/$/, '$1')
    const found = templates.find(({ pattern }) => pattern.test(path))
    if (found === undefined) return undefined
    const operation = document.paths[found.template]?.[method === 'HEAD' ? 'get' : method.toLowerCase()]
    return operation === undefined ? undefined : { template: found.template, operation }
  }
}

/** A header's text as the value its schema types (integers and booleans are text on the wire). */
function headerValue (text: string, schema: Header['schema']): unknown {
  if (schema?.type === 'integer' && INTEGER.test(text)) return Number(text)
  if (schema?.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true'
  return text
}

const essence = (header: string) => (header.split(';', 1)[0] ?? '').trim().toLowerCase()

/** The documented media type a Content-Type falls under: itself, `type/*` or `*\/*`. */
function mediaFor (content: Record<string, Media>, type: string): [string, Media] | undefined {
  for (const candidate of [type, `${type.split('/')[0]}/*`, '*/*']) {
    const media = content[candidate]
    if (media !== undefined) return [candidate, media]
  }
  return undefined
}

/**
 * Checks responses against an OpenAPI 3.1 document: the operation of the request, its status,
 * the media type of the body, the body against the schema of that media type (JSON parsed, NDJSON
 * line by line against `x-itemSchema`, text as a string), and the headers (required ones present,
 * every documented one valid). `check()` answers the mismatches, or undefined when the request is
 * no operation of the document (a path or method it does not describe).
 */
export function conformance (document: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  formats.default(ajv)
  ajv.addFormat('binary', true)
  // The document is one schema resource: $refs to #/components/… resolve inside it.
  ajv.addSchema(document, 'openapi.json')
  const validators = new Map<string, ValidateFunction>()
  const validator = (pointer: string) => {
    let validate = validators.get(pointer)
    if (validate === undefined) validators.set(pointer, validate = ajv.compile({ $ref: `openapi.json#${pointer}` }))
    return validate
  }
  const match = operationMatcher(document)

  const problems = (pointer: string, value: unknown, what: string): string[] => {
    const validate = validator(pointer)
    return validate(value) ? [] : [`${what}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`]
  }

  function checkBody (pointer: string, media: Media, type: string, body: string): string[] {
    if (media['x-itemSchema'] !== undefined) {
      if (body !== '' && !body.endsWith('\n')) return ['an NDJSON body must end with a newline']
      return body.split('\n').slice(0, -1).flatMap((line, index) => {
        try {
          return problems(`${pointer}/x-itemSchema`, JSON.parse(line), `line ${index + 1}`)
        } catch {
          return [`line ${index + 1} is not JSON`]
        }
      })
    }
    if (media.schema === undefined) return []
    if (type === 'application/x-www-form-urlencoded' && media.encoding !== undefined) {
      // A form of repeated keys (encoding: form, explode): every field a list of its values.
      const fields: Record<string, string[]> = {}
      for (const [key, value] of new URLSearchParams(body)) (fields[key] ??= []).push(value)
      return problems(`${pointer}/schema`, fields, 'form')
    }
    if (!isJson(type)) return problems(`${pointer}/schema`, body, 'body')
    try {
      return problems(`${pointer}/schema`, JSON.parse(body), 'body')
    } catch {
      return ['the body is not JSON']
    }
  }

  return {
    check (method: string, url: string, res: ReceivedResponse): string[] | undefined {
      const found = match(method, url)
      if (found === undefined) return undefined
      const operationPointer = `/paths/${escapePointer(found.template)}/${method === 'HEAD' ? 'get' : method.toLowerCase()}`
      const status = String(res.statusCode)
      const response = found.operation.responses[status]
      if (response === undefined) return [`status ${status} is not documented`]
      const pointer = `${operationPointer}/responses/${status}`
      const mismatches: string[] = []
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        const raw = res.headers[name.toLowerCase()]
        if (raw === undefined) {
          if (header.required === true) mismatches.push(`the required header ${name} is missing`)
          continue
        }
        const value = headerValue(String(raw), header.schema)
        mismatches.push(...problems(`${pointer}/headers/${escapePointer(name)}/schema`, value, `header ${name}`))
      }
      const contentType = res.headers['content-type']
      if (response.content === undefined) {
        if (res.body !== '') mismatches.push(`status ${status} has no body in the document, the response has one`)
        return mismatches
      }
      if (contentType === undefined) {
        if (res.body !== '') mismatches.push('a body without Content-Type')
        return mismatches
      }
      const type = essence(String(contentType))
      const media = mediaFor(response.content, type)
      if (media === undefined) return [...mismatches, `${type} is not a documented media type of status ${status}`]
      // HEAD has the headers of GET and no body.
      if (method === 'HEAD') return mismatches
      // Bytes documented as any type (`*/*`) are not parsed, whatever type they are.
      return [...mismatches, ...checkBody(`${pointer}/content/${escapePointer(media[0])}`, media[1], media[0], res.body)]
    }
  }
}

export type Conformance = ReturnType<typeof conformance>

/**
 * How many responses were validated, by outcome, in this process: written to the file named by
 * CONFORMANCE_COUNTS (one JSON line per process, at exit) to report a whole run's figures.
 */
export const conformanceCounts = { validated: 0, undescribed: 0, mismatched: 0 }
const countsFile = process.env.CONFORMANCE_COUNTS
if (countsFile !== undefined) {
  process.on('exit', () => {
    fs.appendFileSync(countsFile, JSON.stringify({ file: process.argv[1], ...conformanceCounts }) + '\n')
  })
}
