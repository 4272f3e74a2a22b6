import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { GROUPS, TEST_DIR, groupSuites } from './helpers/groups.js'

// npm test runs the groups of test/groups/, each a process of suites (test/helpers/groups.ts): a
// suite no group imports would never run, one that two import would run twice.

const suites = fs.globSync('**/*.test.ts', { cwd: TEST_DIR }).map((file) => file.split(path.sep).join('/'))
const dividing = Object.entries(GROUPS).filter(([, group]) => group.store === undefined)

t.test('every suite of the loop is run by exactly one group; test/system/ by none', async (t) => {
  const runs = new Map<string, string[]>()
  for (const [name, group] of dividing) for (const file of groupSuites(group)) runs.set(file, [...runs.get(file) ?? [], name])
  const loop = suites.filter((file) => !file.startsWith('system/'))
  t.ok(loop.length > 80 && loop.includes('lib/throttle.test.ts'), `the suites are found (${loop.length})`)
  t.same(loop.filter((file) => runs.get(file)?.length !== 1).map((file) => `${file}: ${runs.get(file)?.join(', ') ?? 'no group'}`), [])
  t.same([...runs.keys()].filter((file) => !loop.includes(file)), [], 'a group runs suites only, and none of the system tier')
})

t.test('a group on another store runs suites of the others again', async (t) => {
  const divided = new Set(dividing.flatMap(([, group]) => groupSuites(group)))
  for (const [name, group] of Object.entries(GROUPS).filter(([, group]) => group.store !== undefined)) {
    const files = groupSuites(group)
    t.ok(files.length > 0, `${name}: ${files.length} suites`)
    t.same(files.filter((file) => !divided.has(file)), [], `${name}: each is a suite of the loop`)
  }
})

t.test('each group has one file of test/groups/, ranked, and each file runs a group', async (t) => {
  const files = fs.readdirSync(path.join(TEST_DIR, 'groups')).sort()
  const named = files.map((file) => {
    const [, rank, name] = /^(\d+)-(.+)\.ts$/.exec(file) ?? []
    const runs = /runGroup\('([^']+)'\)/.exec(fs.readFileSync(path.join(TEST_DIR, 'groups', file), 'utf8'))?.[1]
    t.equal(runs, name, `${file} runs the group its name says`)
    return { rank: Number(rank), name }
  })
  t.same(named.map(({ name }) => name).sort(), Object.keys(GROUPS).sort(), 'a file for every group, a group for every file')
  t.equal(new Set(named.map(({ rank }) => rank)).size, files.length, 'no two files share a rank')
})
