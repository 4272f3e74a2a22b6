import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { projectRoot } from '../../lib/project-root.js'

/**
 * Runs a check script of its own process (deploy/check-nginx.mjs, test/browser/*.js: they print
 * `ok N - what` or `not ok N - what` a check, and exit 0 when every check passed) as assertions
 * of `t`: each check one, its exit code one more.
 */
export async function runCheckScript (t: Test, script: string): Promise<void> {
  const child = spawn(process.execPath, [script], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  let checks = 0
  for await (const line of createInterface({ input: child.stdout })) {
    const check = /^(not )?ok (?:\d+ )?- (.*)$/.exec(line)
    if (check !== null) {
      checks++
      t.ok(check[1] === undefined, check[2] ?? line)
    } else if (line.startsWith('# ')) {
      t.comment(line.slice(2))
    }
  }
  const [code] = await exited
  t.ok(checks > 0, `${script}: ${checks} checks`)
  t.equal(code, 0, `${script} exits 0`)
}
