import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { writeClient } from '../../scripts/client/generate.js'
import { projectRoot } from '../../lib/project-root.js'

/** The generated files of client/ are those `npm run client` writes from the current document. */
t.test('the committed client is generated from the current document (else: npm run client)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const names = await writeClient(dir)
  t.same(names.sort(), ['openapi.json', 'operations.ts', 'schema.ts'])
  for (const name of names) {
    const committed = fs.readFileSync(path.join(projectRoot, 'client', name), 'utf8')
    t.ok(committed === fs.readFileSync(path.join(dir, name), 'utf8'), `client/${name} is up to date`)
  }
  const operations = fs.readFileSync(path.join(dir, 'operations.ts'), 'utf8')
  t.match(operations, /'GET \/users\/list-all': \{ security: 'basic', errors: \[[^\]]*\b401\b/, 'Basic credentials, and their 401')
  t.match(operations, /'POST \/products': \{ security: 'bearer', errors: \[[^\]]*\b401\b/, 'Bearer credentials, and their 401')
  t.match(operations, /'GET \/users\/\{userid\}': \{ errors: \[[^\]]*\b404\b[^\]]*\], headers: \{ 503: HEADERS_\d+ \} \}/, 'no credentials; the documented errors; the headers of an error status')
  t.match(operations, /const HEADERS_\d+ = \{ 'Retry-After': 'integer' \} as const\n/, 'a set of headers declared by many responses, written once')
  t.match(operations, /'GET \/albert': \{ [^\n]*200: \{ 'X-An-Int': 'integer', 'X-A-Bool': 'boolean' \}/, 'required headers')
  t.match(operations, /'GET \/isaac': \{ [^\n]*200: \{ 'X-An-Int': 'integer\?', 'X-A-Bool': 'boolean\?' \}/, 'optional ones, marked')
  t.match(operations, /'GET \/static\/\{path\}': \{ errors: \[304, /, 'a 304 is not a success either')
  t.notMatch(operations, /errors: \[[^\]]*\b2\d\d\b/, 'no success among the errors')
})
