// What the browser checks share: the built service started as `npm start` runs it, Debian's
// Chromium launched headless, and TAP-like lines for each check.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { chromium } from 'playwright-core'

const root = path.resolve(import.meta.dirname, '..', '..')
export const TIMEOUT_MS = 30_000

const services = new Set()
// However this script ends (a failed start included), no service outlives it.
process.on('exit', () => { for (const child of services) child.kill('SIGTERM') })

/**
 * `node dist/bundle/server.js` (as `npm start` runs it) on a free port, its metrics too (two run at
 * once); resolves with its URL once it listens, or rejects with the last line it printed.
 */
export function startService (env = {}) {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'bundle', 'server.js')], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  services.add(child)
  let last = ''
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      services.delete(child)
      reject(new Error(`the service exited with ${code}: ${last}`))
    })
    const lines = createInterface({ input: child.stdout })
    lines.on('line', (line) => {
      last = line
      const url = /"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(line)?.[1]
      if (url !== undefined) resolve({ url, stop: () => child.kill('SIGTERM') })
    })
  })
}

/** Debian's Chromium, headless, with the flags it needs as root in a container. */
export function launchChromium () {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
  })
}

const checks = []
export function check (ok, what) {
  checks.push(ok)
  console.log(`${ok ? 'ok' : 'not ok'} ${checks.length} - ${what}`)
}

/** Prints the count of checks and sets the exit code: 1 when one failed. */
export function report () {
  const failed = checks.filter((ok) => !ok).length
  console.log(`# ${checks.length - failed} of ${checks.length} checks passed`)
  process.exitCode = failed === 0 ? 0 : 1
}
