import t from 'tap'
import { memoryLimit, memoryLimitSeries } from '../../../lib/metrics/memory-limit.js'

t.test('the memory limit Node sees; none when it cannot tell or there is none', async (t) => {
  t.equal(memoryLimit(() => 512 * 1024 ** 2), 512 * 1024 ** 2, 'a container\'s limit')
  t.equal(memoryLimit(() => 0), undefined, 'libuv cannot tell')
  t.equal(memoryLimit(() => undefined), undefined, 'Node without an answer')
  t.equal(memoryLimit(() => 2 ** 64), undefined, 'a cgroup without a limit: 2^64 − 1 as a number')
  t.equal(memoryLimit(() => 0x7FFFFFFFFFFFF000), undefined, 'cgroup v1\'s "unlimited", should it come through')
  const here = process.constrainedMemory()
  t.equal(memoryLimit(), here > 0 && here <= Number.MAX_SAFE_INTEGER ? here : undefined, 'process.constrainedMemory() by default')
})

t.test('app_memory_limit_bytes: the limit, or no series at all', async (t) => {
  t.equal(memoryLimitSeries(() => 1024), [
    '# HELP app_memory_limit_bytes The memory limit of the process (its container\'s), as Node sees it; absent when there is none',
    '# TYPE app_memory_limit_bytes gauge',
    'app_memory_limit_bytes 1024',
    ''
  ].join('\n'))
  t.equal(memoryLimitSeries(() => 2 ** 64), '')
})
