import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { projectRoot } from '../lib/project-root.js'

// The benchmarks import the build's modules (dist/, tsc's output of the sources) by name, and no
// test runs them: a name the sources stop exporting breaks a bench unseen until someone runs it
// (fastify-floor.js, and every bench that starts it, once did). Each name is looked up here in
// the source module tsc compiles it from.

const bench = path.join(projectRoot, 'bench')
const DIST_IMPORT = /^import\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\}\s*)?from\s+'\.\.\/dist\/([^']+)\.js'/gm

/** Per bench file, each module of dist/ it imports (as its source, below the root) and the names it takes. */
function distImports (): Array<{ file: string, source: string, names: string[] }> {
  return fs.readdirSync(bench).filter((file) => file.endsWith('.js')).flatMap((file) =>
    [...fs.readFileSync(path.join(bench, file), 'utf8').matchAll(DIST_IMPORT)].map(([, defaultName, named, module]) => ({
      file,
      source: `${module}.ts`,
      names: [
        ...(defaultName === undefined ? [] : ['default']),
        ...(named ?? '').split(',').map((name) => name.trim().split(/\s+as\s+/)[0]!).filter((name) => name !== '')
      ]
    })))
}

t.test('every name a bench imports from dist/ is exported by its source', async (t) => {
  const imports = distImports()
  t.ok(imports.some(({ file, source }) => file === 'fastify-floor.js' && source === 'schemas/color.ts'), `the imports are found (${imports.length})`)
  for (const { file, source, names } of imports) {
    const module = await import(pathToFileURL(path.join(projectRoot, source)).href) as Record<string, unknown>
    t.same(names.filter((name) => module[name] === undefined), [], `${file}: ${names.join(', ')} from ${source}`)
  }
})
