import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import * as catalogue from '../../lib/error-codes.js'
import { projectRoot } from '../../lib/project-root.js'

// lib/error-codes.ts is the one catalogue of the service's own codes, and docs/contract.md lists it.

type ErrorClass = new (...args: unknown[]) => Error & { code: string, statusCode?: number }

const defined = Object.entries(catalogue as Record<string, unknown>)
  .filter((entry): entry is [string, ErrorClass] => typeof entry[1] === 'function')
  .map(([name, ErrorClass]) => {
    const error = new ErrorClass('x', 'y', 'z')
    return { name, code: error.code, status: error.statusCode }
  })

/** The rows of docs/contract.md's table of error codes: code → status (undefined for "—"). */
function documented (): Map<string, number | undefined> {
  const markdown = fs.readFileSync(path.join(projectRoot, 'docs', 'contract.md'), 'utf8')
  const rows = [...markdown.matchAll(/^ *\| `(API_ERR_[A-Z_]+)` \| (\d{3}|—) \|/gm)]
  return new Map(rows.map((row) => [row[1] as string, row[2] === '—' ? undefined : Number(row[2])]))
}

t.test('every code of the catalogue has the prefix of its own, and the contract documents it with its status', async (t) => {
  const table = documented()
  t.ok(defined.length >= 20, 'the catalogue')
  for (const { name, code, status } of defined) {
    t.ok(code.startsWith(catalogue.CODE_PREFIX), `${name}: ${code} has the service's prefix`)
    t.ok(table.has(code), `${code} is in docs/contract.md`)
    // Errors that end the process (500) answer no request: the table gives them no status ("—").
    const documentedStatus = table.get(code)
    t.equal(documentedStatus ?? 500, status, `${code}: status ${documentedStatus ?? `— (${status}: it ends the process)`}`)
  }
  t.same([...table.keys()].filter((code) => !defined.some((error) => error.code === code)), [], 'no documented code without a definition')
})

/** The hand-written sources of the service: what the code answers with. */
function sources (): string[] {
  const roots = ['lib', 'plugins', 'routes', 'schemas']
  return [
    ...roots.flatMap((root) => fs.readdirSync(path.join(projectRoot, root), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts')).map((file) => path.join(root, file))),
    'app.ts', 'server.ts', 'service.ts'
  ]
}

/** Folders of a package that hold no code it runs. */
const NOT_RUN = new Set(['node_modules', 'test', 'tests', 'example', 'examples', 'types', 'benchmark', 'benchmarks'])

/** The runtime dependencies' own JavaScript files (neither their tests nor their dependencies'), read lazily. */
function * dependencySources (): Generator<{ name: string, text: string }> {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of Object.keys(pkg.dependencies)) {
    const root = path.join(projectRoot, 'node_modules', name)
    for (const file of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (/\.[cm]?js$/.test(file) && !file.split(path.sep).some((part) => NOT_RUN.has(part))) yield { name, text: fs.readFileSync(path.join(root, file), 'utf8') }
    }
  }
}

/** The installed package (a runtime dependency) whose code raises `code`, if one does. */
function raisedBy (code: string): string | undefined {
  const spelled = new RegExp(`['"]${code}['"]`)
  for (const { name, text } of dependencySources()) if (spelled.test(text)) return name
  return undefined
}

t.test('the service defines its codes nowhere else, and none in Fastify\'s namespace that no installed package raises', async (t) => {
  // The codes of Fastify and its plugins that the service raises with messages of its own (docs/contract.md).
  const borrowed = new Map<string, string | undefined>()
  for (const file of sources()) {
    if (file === path.join('lib', 'error-codes.ts')) continue
    const text = fs.readFileSync(path.join(projectRoot, file), 'utf8')
    t.notMatch(text, /['"`]API_ERR_[A-Z]/, `${file} spells no code of the service's own: it imports it from lib/error-codes.ts`)
    for (const [, code] of text.matchAll(/createError\(\s*'([A-Z_]+)'/g)) {
      if (!borrowed.has(code!)) borrowed.set(code!, raisedBy(code!))
      t.ok(borrowed.get(code!), `${file}: ${code} is raised by ${borrowed.get(code!) ?? 'no installed package'}`)
    }
  }
  t.equal(borrowed.get('FST_BASIC_AUTH_MISSING_OR_BAD_AUTHORIZATION_HEADER'), '@fastify/basic-auth', 'the codes are found')
  t.equal(raisedBy('FST_BEARER_AUTH_INVALID_TOKEN'), undefined, 'a plugin the service does not install raises nothing')
})
