import fs from 'node:fs'
import Module, { SourceMap, createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import { build } from 'esbuild'
import t from 'tap'
import { LineMap, mapBundleStacks } from '../../lib/bundle-stack.js'

/** A bundle made as scripts/bundle.js makes the service's (minified, map beside), run as server.ts runs it. */
async function runBundle (dir: string): Promise<{ bundle: string, exports: Record<string, () => unknown> }> {
  fs.writeFileSync(path.join(dir, 'thrower.ts'), [
    'export function deep (): never {',
    '  throw new Error(\'from the sources\')',
    '}',
    'export function caller (): unknown {',
    '  return deep()',
    '}',
    ''
  ].join('\n'))
  const bundle = path.join(dir, 'out', 'service.cjs')
  await build({ entryPoints: [path.join(dir, 'thrower.ts')], bundle: true, platform: 'node', format: 'cjs', minifyWhitespace: true, minifySyntax: true, sourcemap: 'linked', outfile: bundle, logLevel: 'silent' })
  const script = new vm.Script(Module.wrap(fs.readFileSync(bundle, 'utf8')), { filename: bundle })
  const module = { exports: {} as Record<string, () => unknown> }
  script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, path.dirname(bundle))
  return { bundle, exports: module.exports }
}

t.test('a frame in the bundle names the TypeScript source, line and column; others stay as V8 writes them', async (t) => {
  const dir = t.testdir()
  const { bundle, exports } = await runBundle(dir)
  const previous = Error.prepareStackTrace
  t.teardown(() => { Error.prepareStackTrace = previous })
  const stackOf = () => { try { exports.caller!() } catch (err) { return (err as Error).stack! } return '' }

  delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace
  t.match(stackOf(), `${bundle}:1:`, 'without it: the bundle, line 1 (minified)')

  mapBundleStacks(bundle)
  const stack = stackOf().split('\n')
  t.equal(stack[0], 'Error: from the sources')
  t.match(stack[1], new RegExp(`^    at deep \\(${path.join(dir, 'thrower.ts').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2:9\\)$`), 'the throw, in thrower.ts')
  t.match(stack[2], /thrower\.ts:5:10\)$/, 'its caller')
  t.match(stack[3], /bundle-stack\.test\.ts:\d+:\d+\)$/, 'a frame outside the bundle as it was')
  t.notMatch(stack.join('\n'), 'service.cjs', 'no frame left in the bundle')
})

t.test('without its map (or with a broken one) the stack stays as it is', async (t) => {
  const dir = t.testdir()
  const { bundle, exports } = await runBundle(dir)
  const previous = Error.prepareStackTrace
  t.teardown(() => { Error.prepareStackTrace = previous })
  for (const map of [path.join(dir, 'missing.map'), path.join(dir, 'thrower.ts')]) {
    mapBundleStacks(bundle, map)
    try { exports.caller!() } catch (err) { t.match((err as Error).stack, `${bundle}:1:`, path.basename(map)) }
  }
  const plain = new Error('plain')
  t.match(plain.stack, /^Error: plain\n {4}at /, 'an error of no bundle')
  const weird = Object.create(Error.prototype, { name: { get () { throw new Error('no name') } } }) as Error
  Error.captureStackTrace(weird)
  t.match(weird.stack, /^<error>\n/, 'an error that cannot say what it is')
})

t.test('LineMap: the origin of every position of a bundle as Node\'s SourceMap finds it, keeping only the mappings\' text', async (t) => {
  const dir = t.testdir()
  const { bundle } = await runBundle(dir)
  const payload = JSON.parse(fs.readFileSync(`${bundle}.map`, 'utf8'))
  const ours = new LineMap(payload)
  const node = new SourceMap(payload)
  const lines = fs.readFileSync(bundle, 'utf8').split('\n')
  let mapped = 0
  for (let line = 0; line < lines.length; line++) {
    for (let column = 0; column <= lines[line]!.length; column++) {
      const origin = ours.find(line, column)
      if (origin === undefined) continue
      const entry = node.findEntry(line, column)
      t.ok('originalSource' in entry && entry.originalSource.endsWith(path.basename(origin.source)) &&
        entry.originalLine === origin.line && entry.originalColumn === origin.column, `${line}:${column}`)
      mapped++
    }
  }
  t.ok(mapped > 50, `${mapped} positions compared`)
  t.equal(ours.find(lines.length + 5, 0), undefined, 'a line the map does not have')

  // "A" is column 0, "C" +1, "E" +2, "G" +3: line 0 has a segment of one field at column 0 (mapped
  // to nothing), then one at column 2 to source 0, line 1, column 3.
  const handmade = new LineMap({ sources: ['a.ts'], mappings: 'A,EACG;AACA' })
  t.equal(handmade.find(0, 1), undefined, 'a segment of one field maps to nothing')
  t.same(handmade.find(0, 9), { source: 'a.ts', line: 1, column: 3 })
  t.same(handmade.find(1, 0), { source: 'a.ts', line: 2, column: 3 }, 'source, line and column carry over lines')
  t.throws(() => new LineMap({ sources: [], mappings: 'A!' }), /not a base64 VLQ digit/)
})
