import t from 'tap'
import { projectRoot } from '../lib/project-root.js'
import { importCycles, importGraph, importsOf, ruleViolations, type ImportGraph } from './helpers/imports.js'

// The rules of the house (plugins/README.md): who may import whom, and no import cycle anywhere.

const graph = importGraph(projectRoot, ['lib', 'plugins', 'routes', 'schemas', 'client', 'scripts', 'test'])

t.test('the sources follow the import rules of plugins/README.md', async (t) => {
  t.ok(Object.keys(graph).filter((file) => file.startsWith('plugins/')).length > 15, 'the plugins are read')
  t.ok(graph['routes/users/index.ts']?.includes('lib/collection-routes.ts'), 'a route\'s imports are found')
  t.ok(graph['lib/memory/repository.ts']?.includes('lib/repository.ts'), 'a store\'s imports are found')
  t.same(ruleViolations(graph), [])
})

t.test('no import cycle anywhere', async (t) => {
  t.same(importCycles(graph), [])
})

t.test('the rules and the cycle search find what breaks them', async (t) => {
  t.same(importsOf([
    "import a from './a.js'",
    "import type { B } from '../b.js'",
    "import {\n  c,\n  d\n} from './cd.js'",
    "export { e } from './e.js'",
    "import './side-effect.js'",
    "const f = await import('./f.js')",
    "import fastify from 'fastify'",
    " * (a comment: import x from './not-an-import.js')"
  ].join('\n')).sort(), ['../b.js', './a.js', './cd.js', './e.js', './f.js', './side-effect.js'])

  const broken: ImportGraph = {
    'routes/users/index.ts': ['lib/collection-routes.ts', 'schemas/user.ts', 'routes/users/listing.ts', 'plugins/auth.ts', 'routes/hello/index.ts'],
    'routes/a.ts': ['routes/b/index.ts'],
    'plugins/auth.ts': ['lib/secrets.ts', 'schemas/auth.ts', 'plugins/errors.ts'],
    'plugins/collections/index.ts': ['plugins/collections/postgres.ts', 'plugins/range.ts'],
    'plugins/edge/cors.ts': ['plugins/edge/security-headers.ts'],
    'plugins/external/formbody.ts': ['plugins/edge/compress.ts'],
    'lib/errors.ts': ['schemas/common.ts', 'plugins/errors.ts', 'routes/ready/index.ts'],
    'schemas/user.ts': ['schemas/common.ts', 'lib/errors.ts', 'plugins/config.ts'],
    'app.ts': ['plugins/config.ts', 'lib/config/load.ts'],
    'lib/memory/repository.ts': ['lib/repository.ts', 'lib/postgres/sort-keys.ts'],
    'lib/postgres/repository.ts': ['lib/repository.ts', 'lib/postgres/listings.ts', 'lib/memory/repository.ts']
  }
  t.same(ruleViolations(broken), [
    'routes/users/index.ts imports plugins/auth.ts',
    'routes/users/index.ts imports routes/hello/index.ts',
    'routes/a.ts imports routes/b/index.ts',
    'plugins/auth.ts imports plugins/errors.ts',
    'plugins/collections/index.ts imports plugins/range.ts',
    'plugins/edge/cors.ts imports plugins/edge/security-headers.ts',
    'plugins/external/formbody.ts imports plugins/edge/compress.ts',
    'lib/errors.ts imports plugins/errors.ts',
    'lib/errors.ts imports routes/ready/index.ts',
    'schemas/user.ts imports plugins/config.ts',
    'lib/memory/repository.ts imports lib/postgres/sort-keys.ts',
    'lib/postgres/repository.ts imports lib/memory/repository.ts'
  ])

  t.same(importCycles({ a: ['b'], b: ['c'], c: ['a'], d: ['a'], e: ['e'], f: [] }), [['a', 'b', 'c'], ['e']])
  t.same(importCycles({ a: ['b'], b: ['c'], c: [] }), [])
})
