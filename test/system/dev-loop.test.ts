import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { until } from '../helpers/index.js'
// @ts-expect-error: a plain script (npm run dev), without types
import { devLoop } from '../../scripts/dev-loop.js'

/**
 * A project of one module, and an "app" that appends the emitted module's text to a log each time
 * it starts, then stays up until it is stopped (as `fastify start` does). Its signal handlers come
 * before that line: the test signals the app once the line is there, and a SIGUSR2 that came
 * between the two, with no handler yet, would end the app (the signal's default) and the test
 * would wait for a line that never comes (seen once in a run of the whole suite).
 */
function project (dir: string) {
  fs.mkdirSync(path.join(dir, 'src'))
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2023', outDir: 'dist', rootDir: 'src' },
    include: ['src']
  }))
  const source = path.join(dir, 'src', 'greeting.ts')
  fs.writeFileSync(source, 'export const greeting: string = \'one\'\n')
  const starts = path.join(dir, 'starts.log')
  const app = path.join(dir, 'app.mjs')
  fs.writeFileSync(app, [
    'import fs from \'node:fs\'',
    `process.on('SIGUSR2', () => fs.appendFileSync(${JSON.stringify(starts)}, 'SIGUSR2\\n'))`,
    'process.on(\'SIGTERM\', () => process.exit(0))',
    'setInterval(() => {}, 1000)',
    `fs.appendFileSync(${JSON.stringify(starts)}, fs.readFileSync(${JSON.stringify(path.join(dir, 'dist', 'greeting.js'))}, 'utf8').match(/'(\\w+)'/)[1] + '\\n')`
  ].join('\n'))
  return {
    source,
    command: [process.execPath, app],
    started: () => fs.existsSync(starts) ? fs.readFileSync(starts, 'utf8').split('\n').filter(Boolean) : []
  }
}

t.test('npm run dev: one start; an edit that does not type-check keeps the last good build running and says why; a good one restarts', async (t) => {
  const dir = t.testdir()
  const { source, command, started } = project(dir)
  let output = ''
  const { stop, signal } = devLoop({ project: path.join(dir, 'tsconfig.json'), command, write: (text: string) => { output += text }, color: false })
  t.teardown(() => stop())

  await until(() => started().length === 1, 60_000)
  t.same(started(), ['one'], 'the first build starts the app, once')

  fs.writeFileSync(source, 'export const greeting: string = 2\n')
  await until(() => /not restarted: the last good build keeps running/.test(output), 60_000)
  t.match(output, /greeting\.ts\(1,14\): error TS2322: Type 'number' is not assignable to type 'string'/, 'the type error, where the app\'s output is')
  t.match(fs.readFileSync(path.join(dir, 'dist', 'greeting.js'), 'utf8'), /'one'/, 'nothing emitted: the last good build stays')
  t.same(started(), ['one'], 'and the app was not restarted')

  fs.writeFileSync(source, 'export const greeting: string = \'two\'\n')
  await until(() => started().length === 2, 60_000)
  t.same(started(), ['one', 'two'], 'a good edit: restarted on the new build')
  signal('SIGUSR2')
  await until(() => started().length === 3, 60_000)
  t.same(started(), ['one', 'two', 'SIGUSR2'], 'a signal passed on reaches the app (scripts/dev.js passes on a second SIGINT or SIGTERM)')
  await stop()
  signal('SIGUSR2')
  t.same(started(), ['one', 'two', 'SIGUSR2'], 'once it has stopped, nothing to pass a signal to')
  t.match(output, /\[dev\] starting: .*\n[^]*\[dev\] restarting: /)
})
