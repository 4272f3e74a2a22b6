import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { cruise, type ICruiseResult } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'
import { projectRoot } from '../lib/project-root.js'

// The rules of the house (plugins/README.md): who may import whom, and no import cycle anywhere,
// stated in .dependency-cruiser.mjs. They run here as `npm run imports` runs them, and on a tree
// that breaks each of them once: a rule that can no longer fail fails here.

const options = await extractDepcruiseOptions(path.join(projectRoot, '.dependency-cruiser.mjs'))
const tsConfigFile = path.join(projectRoot, 'tsconfig.json')
const tsConfig = extractTSConfig(tsConfigFile)

/** The sources `npm run imports` cruises: its arguments before the first option. */
function scriptSources (): string[] {
  const script: string = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts.imports
  const [command, ...args] = script.split(/\s+/)
  if (command !== 'depcruise') throw new Error(`npm run imports runs ${command}, not depcruise`)
  return args.slice(0, args.findIndex((arg) => arg.startsWith('-')))
}

/** The cruise of `sources` from `baseDir` (the paths it reports are relative to it) with the config's rules. */
async function cruiseFrom (baseDir: string, sources: string[]): Promise<ICruiseResult> {
  // The config names tsconfig.json from the top level: from anywhere else, by its full path.
  const { output } = await cruise(sources, { ...options, tsConfig: { fileName: tsConfigFile }, baseDir }, {}, { tsConfig })
  return output as ICruiseResult
}

/** The violations as `rule: from → to` (a cycle by the dependency it is reported on). */
const violations = (result: ICruiseResult) => result.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`).sort()

/** The files of the repository each file imports. */
const localImports = (result: ICruiseResult, file: string) => result.modules.find((module) => module.source === file)?.dependencies
  .filter((dependency) => dependency.dependencyTypes.includes('local')).map((dependency) => dependency.resolved) ?? []

t.test('the sources follow the import rules of plugins/README.md', async (t) => {
  const result = await cruiseFrom(projectRoot, scriptSources())
  const sources = result.modules.map((module) => module.source)
  t.ok(sources.filter((file) => file.startsWith('plugins/')).length > 15, 'the plugins are read')
  t.ok(sources.includes('app.ts') && sources.includes('test/imports.test.ts'), 'the top level and the tests are read')
  t.notOk(sources.some((file) => file.startsWith('test/fixtures/')), 'the tree that breaks the rules is not')
  t.ok(localImports(result, 'routes/users/index.ts').includes('lib/collection-routes.ts'), 'a route\'s imports are found, `.js` as `.ts`')
  t.ok(localImports(result, 'lib/memory/auth-failures.ts').includes('lib/auth-failures.ts'), 'a type-only import is found')
  t.ok(localImports(result, 'plugins/collections/index.ts').includes('plugins/collections/postgres.ts'), 'a dynamic import is found')
  t.same(violations(result), [])
})

t.test('the rules and the cycle search find what breaks them', async (t) => {
  const result = await cruiseFrom(path.join(import.meta.dirname, 'fixtures', 'house'), ['.'])
  t.ok(localImports(result, 'routes/users/index.ts').includes('schemas/user.ts'), 'the tree\'s imports are found')
  t.notOk(localImports(result, 'lib/errors.ts').includes('plugins/range.ts'), 'an import in a comment is none')
  t.same(violations(result), [
    'lib-imports-no-plugin-and-no-route: lib/errors.ts → plugins/errors.ts',
    'lib-imports-no-plugin-and-no-route: lib/errors.ts → routes/ready/index.ts',
    'no-circular: cycle/a.ts → cycle/b.ts',
    'no-circular: cycle/e.ts → cycle/e.ts',
    'plugin-file-imports-lib-and-schemas: plugins/auth.ts → plugins/errors.ts',
    'plugin-file-imports-lib-and-schemas: plugins/edge/cors.ts → plugins/edge/security-headers.ts',
    'plugin-file-imports-lib-and-schemas: plugins/external/formbody.ts → plugins/edge/compress.ts',
    'plugin-folder-imports-lib-schemas-and-itself: plugins/collections/index.ts → plugins/range.ts',
    'route-imports-schemas-lib-and-its-group: routes/a.ts → routes/b/index.ts',
    'route-imports-schemas-lib-and-its-group: routes/users/index.ts → plugins/auth.ts',
    'route-imports-schemas-lib-and-its-group: routes/users/index.ts → routes/hello/index.ts',
    'schemas-import-schemas-and-lib: schemas/user.ts → plugins/config.ts',
    'stores-import-nothing-of-each-other: lib/memory/repository.ts → lib/postgres/sort-keys.ts',
    'stores-import-nothing-of-each-other: lib/postgres/repository.ts → lib/memory/repository.ts'
  ])
  const cycles = result.summary.violations.flatMap(({ cycle }) => cycle === undefined ? [] : [cycle.map(({ name }) => name)])
  t.same(cycles, [['cycle/b.ts', 'cycle/c.ts', 'cycle/a.ts'], ['cycle/e.ts']], 'each cycle once, whole; cycle/d.ts imports one but is in none')
})
