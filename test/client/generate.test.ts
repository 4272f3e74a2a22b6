import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { writeClient } from '../../client/generate.js'
import { projectRoot } from '../../lib/config.js'

/** The generated files of client/ are those `npm run client` writes from the current document. */
t.test('the committed client is generated from the current document (else: npm run client)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const names = await writeClient(dir)
  t.same(names.sort(), ['openapi.json', 'schema.ts', 'security.ts'])
  for (const name of names) {
    const committed = fs.readFileSync(path.join(projectRoot, 'client', name), 'utf8')
    t.ok(committed === fs.readFileSync(path.join(dir, name), 'utf8'), `client/${name} is up to date`)
  }
  const security = fs.readFileSync(path.join(dir, 'security.ts'), 'utf8')
  t.match(security, '\'GET /users/list-all\': \'basic\'')
  t.match(security, '\'POST /products\': \'bearer\'')
})
