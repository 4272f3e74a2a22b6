// The production build: dist/ (tsc's output, one file per module) bundled by esbuild into
// dist/bundle/, which `npm start` and the Docker image run. Loading some 600 modules one by one was
// about a fifth of the cold start; the bundle loads a few dozen files.
//
// The tree stays the same shape: every file of dist/ is an entry of its own, at the same place
// under dist/bundle/, because @fastify/autoload reads plugins/ and routes/ beside app.js at start-up;
// what the entries share goes to dist/bundle/chunks/. Packages that find files beside their own
// code at run time (Swagger UI's assets, pino's transport workers) or load optional drivers
// (pg, postgrator) stay in node_modules. dist/ itself is left as it is, for `fastify start`.
import fs from 'node:fs'
import path from 'node:path'
import { build } from 'esbuild'

const dist = path.join(import.meta.dirname, '..', 'dist')
const outdir = path.join(dist, 'bundle')
const EXTERNAL = [
  '@fastify/swagger-ui', 'pino', 'thread-stream', 'pino-pretty',
  'pg', 'pg-native', '@fastify/postgres', 'postgrator'
]

/** The modules of dist/, but the client (a library for other programs, not part of the server). */
function entries (dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return file === outdir || entry.name === 'client' ? [] : entries(file)
    return file.endsWith('.js') ? [file] : []
  })
}

fs.rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: entries(dist),
  outbase: dist,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  external: EXTERNAL,
  // CommonJS packages bundled into ESM still call require() for Node's own modules.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [{
    name: 'app-stays-a-file',
    setup (build) {
      // app.js finds plugins/ and routes/ beside itself (import.meta.dirname): server.js and cli.js
      // import it as a file of its own instead of from a chunk.
      build.onResolve({ filter: /^\.\/app\.js$/ }, (args) =>
        path.dirname(args.importer) === dist ? { path: './app.js', external: true } : undefined)
    }
  }]
})
