// The command StrykerJS's command runner runs for each mutant (stryker.config.mjs): the unit tests
// of one module, in this one process. tap sets the exit code: not 0 when a test fails, which is a
// mutant killed; TAP_BAIL stops at the first failure, since one is enough. The properties try
// their whole budgets (test/helpers/property-runs.ts), as in CI: the scores are measured with them.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { unitOf } from './groups.js'

process.env.TAP_BAIL = '1'
process.env.TEST_PROPERTIES = 'full'
for (const file of unitOf(process.argv[2]).tests) await import(pathToFileURL(path.resolve(file)).href)
