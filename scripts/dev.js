// `npm run dev`: `fastify start` on dist/ (tsc's output of the app, cli.ts its settings), restarted
// after each build that type-checks; a build with a type error keeps the last good one running and
// prints the error beside the app's output (scripts/dev-loop.js). The first build starts it once.
import path from 'node:path'
import { onCloseSignals } from '../lib/close-signals.ts'
import { devLoop } from './dev-loop.js'

const root = path.join(import.meta.dirname, '..')
const cli = path.join(root, 'dist', 'cli.js')
const { stop, signal } = devLoop({
  project: path.join(root, 'tsconfig.build.json'),
  command: [process.execPath, path.join(root, 'node_modules', 'fastify-cli', 'cli.js'), 'start', '--config', cli, '--pretty-logs', cli]
})
// The app hears signals from this process only (dev-loop.js): the first stops the watch and drains
// the app; a later one (not the first's echo: lib/close-signals.ts) is passed on, and fastify-cli
// exits at once. SIGHUP too: the terminal closed, and the app, in a session of its own, would stay.
onCloseSignals(['SIGINT', 'SIGTERM', 'SIGHUP'], {
  close () { stop().then(() => process.exit(0)) },
  force: signal
})
