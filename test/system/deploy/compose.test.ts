import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import YAML from 'yaml'
import { projectRoot } from '../../../lib/project-root.js'

// compose.yaml, checked offline (no Docker engine here): every image it pulls is pinned to a
// release, as the Dockerfile's base is pinned by digest, so that a pull next month runs what was
// tried today.

interface ComposeService { image?: string, build?: unknown }

const compose = YAML.parse(fs.readFileSync(path.join(projectRoot, 'compose.yaml'), 'utf8')) as { services: Record<string, ComposeService> }

/** How many numbers a release of an image has: major.minor.patch, but PostgreSQL's are major.minor. */
const releaseParts = (name: string) => name === 'postgres' ? 2 : 3

/** A tag names a release when it has all its numbers, optionally a variant; a digest pins it whatever the tag. */
function pinned (image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true
  const [, name, tag] = /^(?:.*\/)?([^/:@]+):([^/:@]+)$/.exec(image) ?? []
  if (name === undefined || tag === undefined) return false
  return new RegExp(`^\\d+(\\.\\d+){${releaseParts(name) - 1}}(-[a-z0-9.]+)?$`).test(tag)
}

t.test('what counts as pinned', async (t) => {
  for (const image of ['postgres:17.6-bookworm', 'nginx:1.27.5', 'nginx:1.27.5-bookworm', `nginx@sha256:${'a'.repeat(64)}`, `postgres:17@sha256:${'0'.repeat(64)}`]) {
    t.ok(pinned(image), image)
  }
  for (const image of ['postgres', 'postgres:17', 'postgres:latest', 'postgres:17-bookworm', 'nginx:1.27', 'nginx:1.27-bookworm', 'nginx:stable-alpine', 'postgres:17.6.1', 'registry:5000/nginx']) {
    t.notOk(pinned(image), image)
  }
})

t.test('every image compose pulls is pinned to a release; the API is built from the Dockerfile', async (t) => {
  const services = Object.entries(compose.services)
  t.ok(services.length >= 3, 'the database, the API and the proxy')
  for (const [name, service] of services) {
    if (service.image === undefined) {
      t.ok(service.build, `${name} is built here`)
      continue
    }
    t.ok(pinned(service.image), `${name}: ${service.image}`)
  }
})
