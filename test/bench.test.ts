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

/** The hand-written sources of the service, below the root. */
function serviceSources (): string[] {
  return [
    ...['lib', 'plugins', 'routes', 'schemas'].flatMap((root) => fs.readdirSync(path.join(projectRoot, root), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts')).map((file) => path.join(root, file))),
    ...fs.readdirSync(projectRoot).filter((file) => file.endsWith('.ts'))
  ]
}

/** A measured figure: a time in µs or ns, or a count of instructions. */
const FIGURE = /\d\s?(?:µs|ns)\b|\dk? instructions\b/

// Code comments give the reason for a choice and point to bench/README.md for its figure, so that
// a figure gone stale is corrected in one place (bench/README.md, "Figures measured so far").
t.test('no source quotes a measured figure: bench/README.md holds them', async (t) => {
  const files = serviceSources()
  t.ok(files.includes(path.join('lib', 'memory', 'repository.ts')) && files.includes('app.ts'), `the sources (${files.length})`)
  for (const file of files) {
    const lines = fs.readFileSync(path.join(projectRoot, file), 'utf8').split('\n')
    t.same(lines.flatMap((line, index) => FIGURE.test(line) ? [`${index + 1}: ${line.trim()}`] : []), [], file)
  }
  t.ok(FIGURE.test('(1.3–1.6 µs per user: bench/README.md)') && FIGURE.test('154.9k instructions') && !FIGURE.test('FLUSH_LIMIT_MS, 10 ms'), 'what a figure is')
  t.ok(fs.readFileSync(path.join(bench, 'README.md'), 'utf8').includes('The memory store\'s copy of a created or replaced item (`frozenCopy`'), 'the memory store\'s copy has its figure there')
})
