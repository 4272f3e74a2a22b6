// `npm run dev`: `fastify start` on dist/ (tsc's output of the app, cli.ts its settings), restarted
// after each build that type-checks; a build with a type error keeps the last good one running and
// prints the error beside the app's output (scripts/dev-loop.js). The first build starts it once.
import path from 'node:path'
import { devLoop } from './dev-loop.js'

const root = path.join(import.meta.dirname, '..')
const cli = path.join(root, 'dist', 'cli.js')
const stop = devLoop({
  project: path.join(root, 'tsconfig.build.json'),
  command: [process.execPath, path.join(root, 'node_modules', 'fastify-cli', 'cli.js'), 'start', '--config', cli, '--pretty-logs', cli]
})
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => { stop().then(() => process.exit(0)) })
