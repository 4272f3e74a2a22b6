import { execFileSync } from 'node:child_process'
import t from 'tap'
import { NEW_ID } from '../helpers/request-id.js'

// The process part of a new request id (lib/request-id.ts), drawn as a process starts: the built
// module in two fresh Node processes of its own. Within one process: test/plugins/request-id.test.ts.

t.test('each process draws its own random part: ids of two processes never meet', async (t) => {
  // The built module, in two fresh processes (npm run test:system builds dist/ first).
  const module = new URL('../../dist/lib/request-id.js', import.meta.url).href
  const firstIdOfAProcess = () => execFileSync(process.execPath, ['--input-type=module', '-e',
    `import { newRequestId } from ${JSON.stringify(module)}; process.stdout.write(newRequestId())`], { encoding: 'utf8' })
  const [one, two] = [firstIdOfAProcess(), firstIdOfAProcess()].map((id) => NEW_ID.exec(id))
  t.ok(one !== null && two !== null, 'both are new ids')
  t.equal(one![2], '1', 'a process counts from 1')
  t.equal(two![2], '1')
  t.not(one![1], two![1], 'the random parts differ')
})
