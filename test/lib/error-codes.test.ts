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

t.test('the service defines its codes nowhere else, and none in Fastify\'s namespace that Fastify does not raise', async (t) => {
  // The codes of Fastify and its plugins that the service raises with messages of its own (docs/contract.md).
  const borrowed = /^FST_(ERR_VALIDATION|ERR_CTP_INVALID_MEDIA_TYPE|ERR_NOT_FOUND|UNDER_PRESSURE|BASIC_AUTH_[A-Z_]+|BEARER_AUTH_[A-Z_]+)$/
  for (const file of sources()) {
    if (file === path.join('lib', 'error-codes.ts')) continue
    const text = fs.readFileSync(path.join(projectRoot, file), 'utf8')
    t.notMatch(text, /['"`]API_ERR_[A-Z]/, `${file} spells no code of the service's own: it imports it from lib/error-codes.ts`)
    for (const [, code] of text.matchAll(/createError\(\s*'([A-Z_]+)'/g)) {
      t.match(code, borrowed, `${file}: ${code} is a code Fastify or its plugin raises for the same refusal`)
    }
  }
})
