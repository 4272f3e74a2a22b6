import fs from 'node:fs'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import zlib from 'node:zlib'
import { mapBundleStacks } from './lib/bundle-stack.js'
import { holdNextTickShape } from './lib/next-tick-shape.js'

/**
 * The container's entry (`node dist/bundle/server.js`). The production build puts the whole
 * service into one CommonJS file beside this one, service.cjs (scripts/bundle.js), which runs here
 * through V8's code cache: the code V8 compiled while the service started, kept in
 * `.compile-cache/` beside this file (or in NODE_COMPILE_CACHE), is read back instead of parsing
 * and compiling the bundle again. The first start without a cache writes it once the service
 * listens; the Docker image is built with it. NODE_DISABLE_COMPILE_CACHE=1 turns it off, with
 * Node's own module cache (22.1+), which is on for the few modules outside the bundle (pino, the
 * database driver).
 *
 * Stack traces name the TypeScript sources (lib/bundle-stack.ts): Node applies no source map to a
 * vm.Script. Elsewhere (tsc's dist/, no bundle beside it) the service is imported as it is.
 */
type Service = typeof import('./service.js')

// Before anything runs a collection (docs/build.md, "Node's nextTick after an idle collection").
holdNextTickShape()

const bundle = path.join(import.meta.dirname, 'service.cjs')
const cacheDirectory = process.env.NODE_COMPILE_CACHE ?? path.join(import.meta.dirname, '.compile-cache')
const cacheOff = process.env.NODE_DISABLE_COMPILE_CACHE !== undefined

const { enableCompileCache } = Module as { enableCompileCache?: (directory: string) => unknown }
enableCompileCache?.(cacheDirectory)

// `server.js` serves; `server.js migrate` applies the database's migrations and ends (service.ts).
const command = process.argv[2]
if (command !== undefined && command !== 'migrate') {
  console.error(`Unknown command ${JSON.stringify(command)}: \`node server.js\` serves, \`node server.js migrate\` applies the database's migrations`)
  process.exit(2)
}

if (fs.existsSync(bundle)) {
  mapBundleStacks(bundle)
  const { service, saveCache } = load(bundle)
  if (command === 'migrate') {
    await service.migrate()
  } else {
    await service.start()
    saveCache()
  }
} else {
  const service = await import('./service.js')
  await (command === 'migrate' ? service.migrate() : service.start())
}

/**
 * Runs the bundle as Node runs a CommonJS module, with the cached code when there is some for this
 * very file (by its CRC) on this Node; `saveCache` writes it when there was none.
 */
function load (file: string): { service: Service, saveCache: () => void } {
  const source = fs.readFileSync(file)
  const cacheFile = path.join(cacheDirectory, `service-${zlib.crc32(source).toString(16)}-${process.version}-${process.arch}.bin`)
  let cachedData: Buffer | undefined
  if (!cacheOff) {
    try {
      cachedData = fs.readFileSync(cacheFile)
    } catch {}
  }
  const script = new vm.Script(Module.wrap(source.toString('utf8')), { filename: file, cachedData })
  const stale = !cacheOff && (cachedData === undefined || script.cachedDataRejected === true)
  const module = new Module(file)
  module.filename = file
  const require = createRequire(file)
  // The files autoload requires take their modules from this one (see scripts/bundle.js).
  require.cache[file] = module
  script.runInThisContext().call(module.exports, module.exports, require, module, file, path.dirname(file))
  module.loaded = true
  // Neither buffer read here (the bundle's bytes, the cache: 4 MB) outlives the start: V8 keeps
  // the source it needs, and only a cache to be written keeps the script.
  return { service: module.exports as Service, saveCache: stale ? () => writeCache(script, cacheFile) : () => {} }
}

/** The code V8 has compiled for `script` so far, into `file`. */
function writeCache (script: vm.Script, file: string): void {
  try {
    // Written aside and renamed: replicas sharing the directory never read half a file.
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}`
    fs.writeFileSync(partial, script.createCachedData())
    fs.renameSync(partial, file)
  } catch {
    // A read-only directory: the service runs as well, it only starts slower.
  }
}
