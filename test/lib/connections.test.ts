import t from 'tap'
import { DEFAULT_CONNECTION_LIMIT, RESERVED_DESCRIPTORS, connectionLimit, openFileLimit, processOpenFileLimit } from '../../lib/connections.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            4096                 524288               files
Max locked memory         8388608              8388608              bytes
`

t.test('openFileLimit: the soft limit of /proc/self/limits', async (t) => {
  t.equal(openFileLimit(LIMITS), 4096)
  t.equal(openFileLimit(LIMITS.replace('4096 ', 'unlimited ')), undefined, 'unlimited: no limit to keep under')
  t.equal(openFileLimit('Max cpu time  unlimited  unlimited  seconds\n'), undefined, 'no such line')
  if (process.platform === 'linux') t.type(processOpenFileLimit(), 'number', 'this process\'s, on Linux')
})

t.test('connectionLimit: MAX_CONNECTIONS, else the descriptor limit less a reserve', async (t) => {
  t.equal(connectionLimit(500, 4096), 500, 'set: as set')
  t.equal(connectionLimit(0, 4096), 4096 - RESERVED_DESCRIPTORS)
  t.equal(connectionLimit(0, 100), 16, 'a tiny limit still takes a few')
  t.equal(connectionLimit(0, undefined), DEFAULT_CONNECTION_LIMIT, 'no limit known')
})
