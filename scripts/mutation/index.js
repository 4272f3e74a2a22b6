// npm run mutation [-- group ...]: StrykerJS on each module of the groups (scripts/mutation/groups.js;
// all by default), one run a module, then the mutation score per module and per group, and the
// mutants that survived, from the runs' JSON reports (reports/mutation/). Outside npm test: a run
// takes tens of minutes. docs/development.md says how to read it.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { GROUPS } from './groups.js'

const names = process.argv.slice(2)
for (const name of names) if (!(name in GROUPS)) throw new Error(`${name}: one of ${Object.keys(GROUPS).join(', ')}`)
const groups = Object.entries(GROUPS).filter(([name]) => names.length === 0 || names.includes(name))
const stryker = path.resolve('node_modules', '.bin', 'stryker')
const reportOf = (module) => path.join('reports', 'mutation', `${module.replaceAll('/', '_')}.json`)

for (const [, units] of groups) {
  for (const { mutate } of units) {
    if (process.env.MUTATION_REPORT_ONLY === '1') break
    console.log(`\n# ${mutate}`)
    const run = spawnSync(stryker, ['run'], { stdio: 'inherit', env: { ...process.env, MUTATE: mutate } })
    if (run.status !== 0) process.exitCode = 1
  }
}

/** Killed and timed-out mutants are detected; compile and runtime errors and ignored ones do not count. */
function counts (mutants) {
  const by = (status) => mutants.filter((mutant) => mutant.status === status).length
  const detected = by('Killed') + by('Timeout')
  const valid = detected + by('Survived') + by('NoCoverage')
  return { mutants: valid, killed: by('Killed'), 'timed out': by('Timeout'), survived: by('Survived') + by('NoCoverage'), score: valid === 0 ? '' : `${(100 * detected / valid).toFixed(1)} %` }
}

const rows = []
const survivors = []
for (const [name, units] of groups) {
  const all = []
  for (const { mutate } of units) {
    if (!fs.existsSync(reportOf(mutate))) { rows.push({ group: name, module: mutate, mutants: 'no report' }); continue }
    const report = JSON.parse(fs.readFileSync(reportOf(mutate), 'utf8'))
    const mutants = Object.values(report.files).flatMap((file) => file.mutants)
    all.push(...mutants)
    rows.push({ group: name, module: mutate, ...counts(mutants) })
    for (const mutant of mutants.filter((each) => each.status === 'Survived' || each.status === 'NoCoverage')) {
      survivors.push(`${mutate}:${mutant.location.start.line} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement ?? '')}`)
    }
  }
  rows.push({ group: name, module: '(all)', ...counts(all) })
}
console.log('\n# Mutation score (detected / valid mutants)')
console.table(rows)
console.log(`\n# Survivors (${survivors.length})\n${survivors.join('\n')}`)
