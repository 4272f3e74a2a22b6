import fs from 'node:fs'
import Module, { SourceMap } from 'node:module'
import path from 'node:path'

/** How far Module.wrap() moves the first line of a CommonJS file to the right. */
const WRAPPER_LENGTH = Module.wrap('\0').indexOf('\0')

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
 * `lib/postgres.ts:98:11`; other frames stay as V8 writes them.
 *
 * The bundle runs wrapped by Module.wrap(), whose function header moves its first line.
 *
 * Nothing is read at start-up: the map (some 6 MB) is read and parsed when the first stack that
 * passes through the bundle is written, and kept. A missing or broken map leaves stacks as they are.
 */
export function mapBundleStacks (bundle: string, mapFile = `${bundle}.map`): void {
  let map: SourceMap | null | undefined
  const load = (): SourceMap | null => {
    try {
      return new SourceMap(JSON.parse(fs.readFileSync(mapFile, 'utf8')))
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
    const entry = map?.findEntry(line - 1, column - 1 - (line === 1 ? WRAPPER_LENGTH : 0))
    if (entry === undefined || !('originalSource' in entry)) return text
    const source = path.resolve(directory, entry.originalSource)
    return text.replace(`${bundle}:${line}:${column}`, `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`)
  }
  Error.prepareStackTrace = (error, sites) => [header(error), ...sites.map(frame)].join('\n    at ')
}
