import { setImmediate as nextTurn } from 'node:timers/promises'

/** Runs sorted by the engine's own sort before they are merged. */
const RUN = 1024

/**
 * A sorted copy of `items`, stable (equal items keep their order), made a slice at a time: the
 * event loop gets a turn after about `budget` items are moved, so that sorting a large collection
 * does not keep every other request waiting (a bottom-up merge sort of runs of RUN items).
 */
export async function sortInSlices<T> (items: readonly T[], compare: (a: T, b: T) => number, budget = 16_384): Promise<T[]> {
  const n = items.length
  let from = items.slice()
  let moved = 0
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n)
    const run = from.slice(start, end).sort(compare)
    for (let i = start; i < end; i++) from[i] = run[i - start] as T
    moved += end - start
    if (moved >= budget) {
      moved = 0
      await nextTurn()
    }
  }
  let to: T[] = new Array(n)
  for (let width = RUN; width < n; width *= 2) {
    for (let left = 0; left < n; left += 2 * width) {
      const middle = Math.min(left + width, n)
      const right = Math.min(left + 2 * width, n)
      let i = left
      let j = middle
      let k = left
      while (k < right) {
        // The left run's item first unless the right one is strictly smaller: stable.
        to[k++] = j >= right || (i < middle && compare(from[j] as T, from[i] as T) >= 0) ? from[i++] as T : from[j++] as T
        if (++moved >= budget) {
          moved = 0
          await nextTurn()
        }
      }
    }
    [from, to] = [to, from]
  }
  return from
}
