// The loop of `npm run dev` (scripts/dev.js): the TypeScript compiler in watch mode, and a command
// run on what it emits, restarted after each build that type-checks. An edit with a type error
// emits nothing (noEmitOnError): the last good build keeps running, and the error is printed in
// the same terminal as the app's output. The first build starts the command once.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import ts from 'typescript'

/**
 * Watches `project` (a tsconfig file) and runs `command` (argv) on each build that has no error,
 * stopping the previous run first (SIGTERM, then its exit). `write` takes what the compiler says,
 * in colour for a terminal. Answers `stop`, which stops the watch and the app, and `signal`, which
 * passes a signal on to the app.
 *
 * The app runs in a process group of its own (`detached`), so that it hears signals from this
 * process only: a terminal's Ctrl-C reaches every process of its foreground group, and the app
 * would have it twice, from the terminal and from the SIGTERM of `stop` (fastify-cli exits at once
 * on a second signal, without its drain).
 */
export function devLoop ({ project, command, write = (text) => process.stderr.write(text), color = process.stderr.isTTY === true, env = process.env }) {
  let app
  let starting = Promise.resolve()
  const running = () => app !== undefined && app.exitCode === null && app.signalCode === null
  const format = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => path.dirname(project),
    getNewLine: () => '\n'
  }
  const restart = () => {
    starting = starting.then(async () => {
      if (running()) {
        const exited = once(app, 'exit')
        app.kill('SIGTERM')
        await exited
      }
      write(`[dev] ${app === undefined ? 'starting' : 'restarting'}: ${command.join(' ')}\n`)
      app = spawn(command[0], command.slice(1), { stdio: 'inherit', env, detached: true })
    })
  }
  const host = ts.createWatchCompilerHost(
    project,
    { noEmitOnError: true, preserveWatchOutput: true },
    ts.sys,
    ts.createEmitAndSemanticDiagnosticsBuilderProgram,
    (diagnostic) => write((color ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics)([diagnostic], format)),
    (diagnostic, _newLine, _options, errorCount) => {
      write(`[dev] ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}\n`)
      // The end of a build: "Found N errors. Watching for file changes."
      if (errorCount === 0) restart()
      else if (errorCount !== undefined) write(`[dev] not restarted: ${app === undefined ? 'nothing runs yet' : 'the last good build keeps running'}\n`)
    }
  )
  const watch = ts.createWatchProgram(host)
  return {
    async stop () {
      watch.close()
      await starting
      if (running()) {
        const exited = once(app, 'exit')
        app.kill('SIGTERM')
        await exited
      }
    },
    signal (name) {
      if (running()) app.kill(name)
    }
  }
}
