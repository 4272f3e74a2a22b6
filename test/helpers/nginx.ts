import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

// deploy/nginx.conf run as written by Debian's nginx (`apt-get install nginx-light`), in front of
// upstreams of the caller's: deploy/check-nginx.mjs (two replicas of dist/) and
// test/system/image.test.ts (the image). Only the upstream's addresses, the listening port and the
// access log's file are replaced (a child's stdio is a pipe, which /dev/stdout cannot be opened on).
// Node imports only: check-nginx.mjs loads this file with Node's own type stripping.

/** Debian's nginx, or undefined when it is not installed. */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => fs.existsSync(file))

export interface Nginx {
  /** What `nginx -t` said of the config: its exit status and its words. */
  syntax: { ok: boolean, said: string }
  /** The access log's file (deploy/nginx.conf's format: `upstream=<address>` a request). */
  accessLog: string
  child: ChildProcess
  /** Stops nginx and removes its directory. */
  stop: () => Promise<void>
}

/** deploy/nginx.conf, listening on 127.0.0.1:`port`, in front of `upstreams` (host:port each). */
export function startNginx (root: string, port: number, upstreams: readonly string[]): Nginx {
  if (NGINX === undefined) throw new Error('nginx is not installed: apt-get install nginx-light (Debian) first')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'servant-nginx-'))
  const accessLog = path.join(work, 'access.log')
  const config = fs.readFileSync(path.join(root, 'deploy', 'nginx.conf'), 'utf8')
    .replace(/^( *)server api:3000;$/m, (_, indent: string) => upstreams.map((upstream) => `${indent}server ${upstream};`).join('\n'))
    .replace(/^( *)listen 80;$/m, `$1listen 127.0.0.1:${port};`)
    .replace('access_log /dev/stdout main;', `access_log ${accessLog} main;`)
  const configFile = path.join(work, 'nginx.conf')
  fs.writeFileSync(configFile, config)
  const args = ['-p', work, '-c', configFile, '-g', `daemon off; pid ${path.join(work, 'nginx.pid')};`]
  const checked = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' })
  const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  return {
    syntax: { ok: checked.status === 0, said: checked.stderr },
    accessLog,
    child,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      fs.rmSync(work, { recursive: true, force: true })
    }
  }
}
