// How many cases a fast-check property tries (docs/development.md, "Property budgets"). Every
// property has a fixed seed, so a run tries the same cases each time, and the loop's cases are the
// first of the full run's.

/** Where TEST_PROPERTIES=full (.ci/run and the mutation runs set it): every case of the budget. */
const FULL = process.env.TEST_PROPERTIES === 'full'

/** The seed of every property, unless FC_SEED=<n> tries another. */
export const SEED = Number(process.env.FC_SEED ?? 1797)

/**
 * The cases of a property whose whole budget is `full`: all of them with TEST_PROPERTIES=full,
 * else `loop`: by default a tenth (at least fast-check's default of 100, at most `full`).
 */
export function propertyRuns (full: number, loop = Math.min(full, Math.max(100, Math.round(full / 10)))): number {
  return FULL ? full : loop
}
