import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { COLLECTION_SUITES } from './collection-suites.js'

// `npm test`'s processes. A test process pays about a second of CPU before its first assertion
// (Node, tap, the TypeScript loader, coverage, the app's imports): paid once per group, not once
// per file. A group is one file of test/groups/ that imports its suites (the *.test.ts files,
// each of which also runs alone: `npx tap test/lib/throttle.test.ts`); tap runs the groups side by
// side and in name order, so each group's file name begins with its rank, the longest first
// (docs/development.md, "The tests").

/** The folder of the suites, the paths below being relative to it. */
export const TEST_DIR = path.join(import.meta.dirname, '..')

export interface Group {
  /** Globs of suites under test/, imported in path order. */
  suites: readonly string[]
  /** Suites the globs match that another group runs (a process of their own). */
  except?: readonly string[]
  /**
   * The suites of other groups run again on another store (see build() in ./index.ts): these
   * groups repeat suites, the others divide them.
   */
  store?: 'postgres'
}

/**
 * By the name its file of test/groups/ has after its rank. The ranks follow each group's time alone
 * (`node --import=tsx test/helpers/run.ts test/groups/<file>`), the longest first: tap starts the
 * files in name order.
 */
export const GROUPS: Readonly<Record<string, Group>> = {
  // The collection suites on PostgreSQL: the same promises as on the memory store.
  postgres: { suites: COLLECTION_SUITES, store: 'postgres' },
  lib: { suites: ['lib/**/*.test.ts'], except: ['lib/tracing.test.ts'] },
  edge: { suites: ['plugins/edge/**/*.test.ts'], except: ['plugins/edge/otel.test.ts', 'plugins/edge/otel-spans.test.ts'] },
  routes: { suites: ['routes/**/*.test.ts'] },
  plugins: { suites: ['plugins/*.test.ts', 'plugins/external/**/*.test.ts'] },
  // The PostgreSQL store's failures (a database hanging, stopped, late): mostly waiting.
  collections: { suites: ['plugins/collections/**/*.test.ts'] },
  contract: { suites: ['openapi/**/*.test.ts', 'client/**/*.test.ts'] },
  project: { suites: ['*.test.ts', 'scripts/**/*.test.ts'] },
  // Tracing is process-wide (a global provider, pg instrumented before it loads): alone.
  'otel-spans': { suites: ['plugins/edge/otel-spans.test.ts'] },
  otel: { suites: ['plugins/edge/otel.test.ts'] },
  tracing: { suites: ['lib/tracing.test.ts'] }
}

/** A group's suites, relative to test/, in the order it runs them. */
export function groupSuites (group: Group): string[] {
  const except = new Set(group.except)
  return [...new Set(group.suites.flatMap((pattern) => fs.globSync(pattern, { cwd: TEST_DIR }).sort()))]
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => !except.has(file))
}

/** Runs suites (paths relative to test/) in this process: their tests, one after another. */
export async function runSuites (files: readonly string[]): Promise<void> {
  for (const file of files) await import(pathToFileURL(path.join(TEST_DIR, file)).href)
}

/** Runs the group `name` in this process. */
export async function runGroup (name: string): Promise<void> {
  const group = GROUPS[name]
  if (group === undefined) throw new Error(`no group ${name} in test/helpers/groups.ts`)
  if (group.store !== undefined) process.env.TEST_STORE = group.store
  await runSuites(groupSuites(group))
}
