// Run by test/system/next-tick-shape.test.ts in a process of its own, with --single-threaded,
// --expose-gc and --allow-natives-syntax, as plain JavaScript from dist/ (a module loader such as
// tsx keeps tick objects of its own alive, which holds the shape as well): `held` holds it first,
// `bare` does not. Then rounds of nextTick calls, each followed by a full collection while no
// tick is pending (a replica gone idle), and prints the state of V8's inline caches for the keys
// of Node's tick object.
import { setImmediate as turn } from 'node:timers/promises'
import { holdNextTickShape } from '../../dist/lib/next-tick-shape.js'

if (process.argv[2] === 'held') holdNextTickShape()
const gc = globalThis.gc
if (gc === undefined) throw new Error('run with --expose-gc')
const noop = () => {}
for (let round = 0; round < 6; round++) {
  // Enough calls for V8 to optimize nextTick, as a replica under load does.
  for (let batch = 0; batch < 50; batch++) {
    for (let i = 0; i < 2000; i++) process.nextTick(noop)
    await turn()
  }
  gc()
}
// %DebugPrint lists each feedback slot of the function with its state; the syntax is only
// accepted in a function compiled after the flag, not in a module parsed by the loader.
// eslint-disable-next-line no-new-func
new Function('f', '%DebugPrint(f)')(process.nextTick)
