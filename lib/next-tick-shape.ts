import { createHook } from 'node:async_hooks'

/**
 * Where the held entry is kept: on `process`, under a registered symbol, so that it is held once
 * per process even when this module is loaded twice (server.js and the bundle each have a copy).
 */
export const HELD_TICK = Symbol.for('api.nextTickShape')

type Holder = { [HELD_TICK]?: object }

/**
 * Keeps one of Node's own `process.nextTick` queue entries alive for the life of the process, so
 * that the hidden class (V8's map) of every entry outlives garbage collections
 * (docs/build.md, "Node's nextTick after an idle collection").
 *
 * Node builds each entry as an object literal with computed keys. When a full collection finds
 * none alive (a replica with no request in flight: idle, or just started), V8 drops that map, and
 * the next entries get a new one. V8's inline caches for the literal's keys then see a map they
 * did not know, and after a few such collections they give up (megamorphic): every `nextTick`,
 * several per request, goes through V8's runtime, and the service pays for it on every request for
 * the rest of the process's life (figures: bench/README.md). One entry held keeps
 * the map, and the caches stay as they are.
 *
 * The entry comes from an async hook's `init`, enabled for this one call only.
 */
export function holdNextTickShape (): void {
  const holder = process as Holder
  if (holder[HELD_TICK] !== undefined) return
  const hook = createHook({
    init (_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') holder[HELD_TICK] ??= resource
    }
  }).enable()
  try {
    process.nextTick(() => {})
  } finally {
    hook.disable()
  }
}
