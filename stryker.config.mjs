// Mutation testing of the pure modules of lib/ and client/ (`npm run mutation`, outside npm test;
// docs/development.md): StrykerJS changes one operator, condition or literal at a time and runs the
// module's unit tests; a mutant they do not notice (survived) is behaviour no test holds. MUTATE
// names the module (scripts/mutation/groups.js); scripts/mutation/index.js runs each in turn.
import { unitOf } from './scripts/mutation/groups.js'

const module = process.env.MUTATE ?? 'lib/range/grammar.ts'
unitOf(module)

export default {
  testRunner: 'command',
  commandRunner: { command: `node --import=./test/helpers/tsx.mjs scripts/mutation/run-tests.js ${module}` },
  coverageAnalysis: 'off',
  mutate: [module],
  // What the sandbox needs to run the tests (node_modules is linked, not copied).
  ignorePatterns: ['dist', 'coverage', '.tap', 'reports', 'client/dist', 'bench', 'deploy', 'docs'],
  reporters: ['clear-text', 'json'],
  jsonReporter: { fileName: `reports/mutation/${module.replaceAll('/', '_')}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: false },
  // A mutant that loops forever is detected by its timeout: the module's tests take seconds.
  timeoutMS: 10_000,
  concurrency: 2,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always'
}
