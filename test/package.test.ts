import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { projectRoot } from '../lib/project-root.js'

// package.json as npm reads it: npm 11 lists at every install the dependencies whose install
// scripts no `allowScripts` entry covers (npm 12 will skip those scripts), so each is reviewed
// once and named there (README, "Node 24").

const read = (file: string) => JSON.parse(fs.readFileSync(path.join(projectRoot, file), 'utf8')) as Record<string, unknown>
const pkg = read('package.json') as { allowScripts?: Record<string, boolean> }
const lock = read('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> }

t.test('allowScripts names every dependency with an install script, and only those', async (t) => {
  const withScripts = [...new Set(Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([where]) => where.replace(/^.*node_modules\//, '')))].sort()
  t.ok(withScripts.includes('esbuild'), 'the lockfile says which packages have one')
  t.same(Object.keys(pkg.allowScripts ?? {}).sort(), withScripts)
  t.ok(Object.values(pkg.allowScripts ?? {}).every((allowed) => allowed), 'each one allowed: both are needed')
})
