import fs from 'node:fs'
import Module from 'node:module'
import path from 'node:path'

/** How far Module.wrap() moves the first line of a CommonJS file to the right. */
const WRAPPER_LENGTH = Module.wrap('\0').indexOf('\0')

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const DIGITS = new Int8Array(128).fill(-1)
for (let i = 0; i < BASE64.length; i++) DIGITS[BASE64.charCodeAt(i)] = i

/** Where a position of the generated file comes from. */
export interface Origin { source: string, line: number, column: number }

/**
 * A source map (version 3) that decodes one generated line at a time: Node's SourceMap decodes
 * every mapping at once into arrays, kept on the heap for the process's life (figures:
 * bench/README.md); this keeps the mappings' text and, per generated line, the state its first
 * segment starts from. Lines and columns are 0-based, as in the map.
 */
export class LineMap {
  readonly sources: readonly string[]
  readonly #mappings: string
  /** Per generated line: the offset of its text in `mappings`, then source, line and column at its start. */
  readonly #lines: Int32Array

  constructor (payload: { sources: string[], mappings: string }) {
    this.sources = payload.sources
    this.#mappings = payload.mappings
    const mappings = payload.mappings
    const count = 1 + [...mappings.matchAll(/;/g)].length
    this.#lines = new Int32Array(count * 4)
    const state = [0, 0, 0]
    let line = 0
    let field = 0
    let value = 0
    let shift = 0
    const record = (start: number) => this.#lines.set([start, state[0]!, state[1]!, state[2]!], line * 4)
    record(0)
    for (let i = 0; i < mappings.length; i++) {
      const code = mappings.charCodeAt(i)
      if (code === 59 /* ; */ || code === 44 /* , */) {
        field = 0
        if (code === 59) {
          line++
          record(i + 1)
        }
        continue
      }
      const digit = DIGITS[code] ?? -1
      if (digit === -1) throw new Error(`source map: not a base64 VLQ digit at ${i}`)
      value += (digit & 31) << shift
      if (digit & 32) {
        shift += 5
        continue
      }
      const delta = value & 1 ? -(value >>> 1) : value >>> 1
      // Fields 1–3 (source, line, column) carry over lines; field 0 (the column) and 4 (a name) do not.
      if (field >= 1 && field <= 3) state[field - 1]! += delta
      field++
      value = 0
      shift = 0
    }
  }

  /** The origin of the generated position (0-based), from the last segment at or before it on its line. */
  find (line: number, column: number): Origin | undefined {
    if (line < 0 || line * 4 >= this.#lines.length) return undefined
    const mappings = this.#mappings
    let i = this.#lines[line * 4]!
    const state = [0, this.#lines[line * 4 + 1]!, this.#lines[line * 4 + 2]!, this.#lines[line * 4 + 3]!]
    let found: Origin | undefined
    let field = 0
    let value = 0
    let shift = 0
    const segment = () => {
      // A segment of one field maps its columns to nothing.
      if (field > 0 && state[0]! <= column) found = field >= 4 ? { source: this.sources[state[1]!] ?? '', line: state[2]!, column: state[3]! } : undefined
      field = 0
    }
    for (; i < mappings.length; i++) {
      const code = mappings.charCodeAt(i)
      if (code === 59) break
      if (code === 44) {
        segment()
        if (state[0]! > column) return found
        continue
      }
      const digit = DIGITS[code] ?? 0
      value += (digit & 31) << shift
      if (digit & 32) {
        shift += 5
        continue
      }
      if (field <= 3) state[field]! += value & 1 ? -(value >>> 1) : value >>> 1
      field++
      value = 0
      shift = 0
    }
    segment()
    return found
  }
}

/** The first line of a stack: `Error: message`, as Node writes it. */
function header (error: Error): string {
  try {
    return Error.prototype.toString.call(error)
  } catch {
    return '<error>'
  }
}

/**
 * Stack traces that name the TypeScript sources, not the bundle: the service runs as one minified
 * file through V8's code cache (server.ts), a vm.Script, for which Node applies no source map, even
 * with --enable-source-maps. Frames in `bundle` are rewritten by its map (`bundle.map`, which
 * esbuild chained to tsc's maps of the .ts files), `service.cjs:634:11030` becoming
 * `lib/postgres/unavailable.ts:12:18`; other frames stay as V8 writes them. The bundle runs wrapped
 * by Module.wrap(), whose function header moves its first line.
 *
 * Nothing is read at start-up: the map is read when the first stack that passes through the bundle
 * is written (about 40 ms), and only its mappings' text is kept (LineMap). A missing or broken map
 * leaves stacks as they are.
 */
export function mapBundleStacks (bundle: string, mapFile = `${bundle}.map`): void {
  let map: LineMap | null | undefined
  const load = (): LineMap | null => {
    try {
      const { sources, mappings } = JSON.parse(fs.readFileSync(mapFile, 'utf8'))
      return new LineMap({ sources, mappings })
    } catch {
      return null
    }
  }
  const directory = path.dirname(mapFile)
  const frame = (site: NodeJS.CallSite): string => {
    const text = site.toString()
    const line = site.getLineNumber()
    const column = site.getColumnNumber()
    if (site.getFileName() !== bundle || line === null || column === null) return text
    map ??= load()
    const origin = map?.find(line - 1, column - 1 - (line === 1 ? WRAPPER_LENGTH : 0))
    if (origin === undefined) return text
    const source = path.resolve(directory, origin.source)
    return text.replace(`${bundle}:${line}:${column}`, `${source}:${origin.line + 1}:${origin.column + 1}`)
  }
  Error.prepareStackTrace = (error, sites) => [header(error), ...sites.map(frame)].join('\n    at ')
}
