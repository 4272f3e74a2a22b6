// Cold start: from spawning `node dist/server.js` to the first 200 on /health. Median of 5.
import { spawn } from 'node:child_process'
import { freePort, median, serverEntry, waitFor } from './lib.js'

const runs = []
for (let i = 0; i < 5; i++) {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [serverEntry], {
    env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: 'ignore'
  })
  await waitFor(`http://127.0.0.1:${port}/health`)
  runs.push(performance.now() - started)
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
}
console.log(`cold start to first 200 on /health: median ${median(runs).toFixed(0)} ms (runs: ${runs.map((ms) => ms.toFixed(0)).join(', ')} ms)`)
