import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { projectRoot } from '../../lib/project-root.js'

// plugins/README.md's table is the map of the plugins: it must say what the plugins are.

const PLUGINS = path.join(projectRoot, 'plugins')

/** The folders of plugins/ whose files are each a plugin (autoload registers every file), not the parts of one: .dependency-cruiser.mjs's plugin-file rule. */
const PLUGIN_FOLDERS: readonly string[] = ['edge', 'external']

interface Row {
  file: string
  name: string
  /** The decorators it adds, as `fastify.x`, `reply.x`, `request.x`: their names. */
  decorates: string[]
  /** The plugins it must be registered after (fastify-plugin `dependencies`) because it uses their decorators. */
  dependsOn: string[]
  /** The plugins it is registered after for their hooks to see its routes ("after `x`"): dependencies too, decorators unused. */
  after: string[]
  /** Plugins whose decorators it uses when they are registered (not a dependency). */
  uses: string[]
}

const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string)

/** The rows of the plugins table. */
function table (markdown: string): Row[] {
  return markdown.split('\n').filter((line) => line.startsWith('| `')).map((line) => {
    const cells = line.slice(1, -1).split(' | ').map((cell) => cell.trim())
    const [file, name, decorates, , , depends] = cells as [string, string, string, string, string, string]
    const [required = '', ...optional] = depends.split(';')
    const after = [...required.matchAll(/after `([^`]+)`/g)].map((match) => match[1] as string).sort()
    return {
      file: names(file)[0] as string,
      name: names(name)[0] as string,
      decorates: names(decorates).filter((token) => /^(fastify|reply|request)\.\w+$/.test(token)).map((token) => token.split('.')[1] as string),
      dependsOn: names(required).filter((name) => !after.includes(name)).sort(),
      after,
      uses: optional.flatMap(names).sort()
    }
  })
}

/** The files autoload registers as plugins: plugins/*.ts, plugins/edge/*.ts, plugins/external/*.ts, plugins/<folder>/index.ts. */
function pluginFiles (): string[] {
  return fs.readdirSync(PLUGINS, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => !file.includes('/') || PLUGIN_FOLDERS.some((folder) => file.startsWith(`${folder}/`)) || file.endsWith('/index.ts'))
    .sort()
}

/** The sources of a plugin: its file, and for a folder's index every file of the folder. */
function sourceOf (file: string): string {
  const files = file.endsWith('/index.ts')
    ? fs.readdirSync(path.join(PLUGINS, path.dirname(file))).filter((name) => name.endsWith('.ts')).map((name) => path.join(path.dirname(file), name))
    : [file]
  return files.map((name) => fs.readFileSync(path.join(PLUGINS, name), 'utf8')).join('\n')
}

/** The plugins whose decorators `source` uses, other than `self`'s: `fastify.config` is config's. */
function decoratorsUsed (source: string, rows: readonly Row[], self: string): string[] {
  return rows.filter((row) => row.name !== self && row.decorates.some((decorator) =>
    new RegExp(decorator === 'config' ? '\\bfastify\\.config\\b' : `\\.${decorator}\\b`).test(source)))
    .map((row) => row.name).sort()
}

const rows = table(fs.readFileSync(path.join(PLUGINS, 'README.md'), 'utf8'))

t.test('the table has a row for every plugin, and no other', async (t) => {
  t.same(rows.map((row) => row.file).sort(), pluginFiles())
})

t.test('each plugin\'s fastify-plugin name and dependencies are the table\'s', async (t) => {
  for (const row of rows) {
    const plugin = (await import(path.join(PLUGINS, row.file))).default
    const meta = plugin[Symbol.for('plugin-meta')] as { name?: string, dependencies?: string[] } | undefined
    t.equal(meta?.name, row.name, `${row.file}: name`)
    t.same([...meta?.dependencies ?? []].sort(), [...row.dependsOn, ...row.after].sort(), `${row.file}: dependencies`)
  }
})

/**
 * The name a plugin file registers under: its file's name, a folder's index its folder's; a file of
 * external/ is the package it configures, registered under that package's name, which ends in it.
 */
function nameMatchesFile (file: string, name: string | undefined): boolean {
  const parts = file.replace(/\.ts$/, '').split('/')
  const own = parts.at(-1) === 'index' ? parts.at(-2) : parts.at(-1)
  return parts[0] === 'external' ? name !== undefined && (name === own || name.endsWith(`/${own}`)) : name === own
}

t.test('every plugin is registered under the name of its file', async (t) => {
  for (const file of pluginFiles()) {
    const plugin = (await import(path.join(PLUGINS, file))).default
    const name = (plugin[Symbol.for('plugin-meta')] as { name?: string } | undefined)?.name
    t.ok(nameMatchesFile(file, name), `${file}: registered as ${name}`)
  }
  t.ok(nameMatchesFile('edge/otel.ts', 'otel') && !nameMatchesFile('edge/otel.ts', 'tracing'), 'a file')
  t.ok(nameMatchesFile('collections/index.ts', 'collections') && !nameMatchesFile('collections/index.ts', 'index'), 'a folder')
  t.ok(nameMatchesFile('external/formbody.ts', '@fastify/formbody') && !nameMatchesFile('external/formbody.ts', '@fastify/cookie'), 'a package')
})

t.test('each plugin depends on exactly the plugins whose decorators it uses', async (t) => {
  for (const row of rows) {
    const source = sourceOf(row.file)
    t.same(decoratorsUsed(source, rows, row.name), [...row.dependsOn, ...row.uses].sort(), `${row.file}: the decorators of ${[...row.dependsOn, ...row.uses].join(', ') || 'no other plugin'}`)
    for (const optional of row.uses) {
      const provider = rows.find((other) => other.name === optional)!
      t.ok(provider.decorates.every((decorator) => !new RegExp(`\\.${decorator}\\b`).test(source) || source.includes(`hasDecorator('${decorator}')`)),
        `${row.file}: uses ${optional} only when it is registered`)
    }
  }
})

t.test('the checks above find a wrong table', async (t) => {
  const markdown = [
    '| `a.ts` | `a` | `fastify.alpha`, the thing | onRoute | — | `config`; `b` when it is registered | 400 |',
    '| `config.ts` | `config` | `fastify.config` | — | — | — | — |',
    '| `b.ts` | `b` | `reply.beta` | — | — | — | — |'
  ].join('\n')
  const parsed = table(markdown)
  t.same(parsed[0], { file: 'a.ts', name: 'a', decorates: ['alpha'], dependsOn: ['config'], after: [], uses: ['b'] })
  t.same(table('| `c.ts` | `c` | — | — | — | `config`, after `b` (its hooks see c\'s routes) | — |')[0], { file: 'c.ts', name: 'c', decorates: [], dependsOn: ['config'], after: ['b'], uses: [] })
  t.same(decoratorsUsed('fastify.config.X; reply.beta(); fastify.alpha', parsed, 'a'), ['b', 'config'])
  t.same(decoratorsUsed('route.config?.auth; request.routeOptions.config', parsed, 'a'), [], 'a route\'s config is not the settings')
  t.same(decoratorsUsed('this.betamax', parsed, 'a'), [], 'whole names only')
})
