import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'tap'
import { HELD_TICK, holdNextTickShape } from '../../lib/next-tick-shape.js'

// Plain JavaScript, on dist/ (which `npm run test:system` builds first).
const probe = path.join(import.meta.dirname, '..', 'helpers', 'next-tick-probe.mjs')

/**
 * The states V8 reports for nextTick's inline caches on its tick object's keys, after idle
 * collections. --single-threaded: no compiler or collector thread whose timing could change what
 * the caches see (without it, one run in a few kept them all).
 */
function literalCaches (mode: 'held' | 'bare'): string[] {
  // Without V8's coverage, which tap turns on in the processes a test starts unless told not to:
  // under it the caches give up anyway, held entry or not (production does not run with it).
  const run = spawnSync(process.execPath, ['--single-threaded', '--expose-gc', '--allow-natives-syntax', probe, mode], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  })
  if (run.status !== 0) throw new Error(`the probe failed: ${run.stderr}`)
  return [...run.stdout.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!)
}

test('without the held entry, idle collections leave nextTick in V8\'s runtime: what the fix is for', (t) => {
  // If a Node release stops doing this, this test says so, and lib/next-tick-shape.ts can go.
  const states = literalCaches('bare')
  t.ok(states.length > 0, 'V8 reports the caches of the literal\'s keys')
  t.ok(states.includes('MEGAMORPHIC'), `this Node gives up on them after idle collections: ${states.join(', ')}`)
  t.end()
})

test('with one tick object held, the caches outlive idle collections', (t) => {
  const states = literalCaches('held')
  t.ok(states.length > 0, 'V8 reports the caches of the literal\'s keys')
  t.notOk(states.includes('MEGAMORPHIC'), `none gave up: ${states.join(', ')}`)
  t.end()
})

test('the entry held is one of nextTick\'s, held once per process', (t) => {
  const holder = process as { [HELD_TICK]?: { callback?: unknown } }
  holdNextTickShape()
  const held = holder[HELD_TICK]
  t.type(held?.callback, 'function', 'a queue entry: its callback')
  holdNextTickShape()
  t.equal(holder[HELD_TICK], held, 'a second call holds no other')
  t.end()
})
