// The coverage thresholds count the TypeScript only if the source maps of the test processes carry
// each file's source (see test/helpers/tsx.mjs): without it every .ts file counts as one covered
// line, and the thresholds hold whatever the tests leave out.
import { findSourceMap } from 'node:module'
import fs from 'node:fs'
import t from 'tap'
import { connectionLimit } from '../lib/connections.js'

t.test('the test processes\' source maps carry the TypeScript sources the coverage report counts', async (t) => {
  t.equal(typeof connectionLimit, 'function', 'a module of ours, loaded through tsx')
  const file = new URL('../lib/connections.ts', import.meta.url)
  const map = findSourceMap(file.href) ?? findSourceMap(file.pathname)
  t.ok(map, 'tsx wrote a source map for it')
  t.equal(map?.payload.sourcesContent?.[0], fs.readFileSync(file, 'utf8'), 'with the file\'s source in it')
})
