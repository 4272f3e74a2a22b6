import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import YAML from 'yaml'
import { EnvSchema } from '../../../lib/config/schema.js'
import { projectRoot } from '../../../lib/project-root.js'
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from '../../../schemas/common.js'
import { build } from '../../helpers/index.js'

// The default of COLLECTION_MAX_ITEMS against the memory the Kubernetes manifests give a pod
// (docs/operations.md, Limits): both collections full of their largest items, on the memory store,
// take at most half of the old space the pods give V8 (--max-old-space-size in the api container's
// NODE_OPTIONS), the other half left to the service itself (lists and their pieces, requests, a
// sorted copy, a copy on write). An item's cost is measured here, on this Node: a Node that lays
// strings or objects out otherwise moves it, and this test says so before a pod is killed.

/** A character outside the BMP: two UTF-16 code units, the most a string of V8 keeps per character. */
const WIDEST = '😀'
const LARGEST_USER = { name: WIDEST.repeat(NAME_MAX_LENGTH), age: Number.MIN_SAFE_INTEGER, email: WIDEST.repeat(EMAIL_MAX_LENGTH), registration_date: '2026-11-30' }
const LARGEST_PRODUCT = { productId: Number.MIN_SAFE_INTEGER, name: WIDEST.repeat(NAME_MAX_LENGTH) }

/**
 * The heap the memory store takes per item, each parsed from its JSON as a request body is (its
 * own strings), the store created as each request does, one at a time: in a process of its own,
 * where nothing else allocates or frees meanwhile.
 */
function heapPerItem (json: string, count = 10_000): number {
  const repository = pathToFileURL(path.join(projectRoot, 'lib', 'memory', 'repository.ts')).href
  const script = `
    const { memoryRepository } = await import(${JSON.stringify(repository)})
    // Kept where the collector sees it: a local no longer used could be collected before the count.
    const items = globalThis.items = memoryRepository([])
    globalThis.gc(); globalThis.gc()
    const before = process.memoryUsage().heapUsed
    for (let n = 0; n < ${count}; n++) await items.create(JSON.parse(${JSON.stringify(json)}))
    globalThis.gc(); globalThis.gc()
    console.log((process.memoryUsage().heapUsed - before) / ${count})`
  return Number(execFileSync(process.execPath, ['--expose-gc', '--import=tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }))
}

/** The api container's --max-old-space-size, in bytes, and the ceiling the base's settings give. */
function podLimits () {
  const deployment = YAML.parse(fs.readFileSync(path.join(projectRoot, 'deploy', 'kubernetes', 'base', 'deployment.yaml'), 'utf8'))
  const api = deployment.spec.template.spec.containers.find((container: { name: string }) => container.name === 'api')
  const options = String(api.env.find((variable: { name: string }) => variable.name === 'NODE_OPTIONS').value)
  const oldSpace = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]) * 2 ** 20
  const settings = fs.readFileSync(path.join(projectRoot, 'deploy', 'kubernetes', 'base', 'settings.env'), 'utf8')
  const set = /^COLLECTION_MAX_ITEMS=(\d+)$/m.exec(settings)?.[1]
  return { oldSpace, maxItems: set === undefined ? EnvSchema.properties.COLLECTION_MAX_ITEMS.default as number : Number(set) }
}

t.test('the largest user and product are valid items: the API stores them', async (t) => {
  const app = await build(t, { API_TOKENS: 't0ken' })
  for (const [url, item] of [['/users', LARGEST_USER], ['/products', LARGEST_PRODUCT]] as const) {
    const res = await app.inject({ method: 'POST', url, payload: item, headers: { authorization: 'Bearer t0ken' } })
    t.equal(res.statusCode, 204, `POST ${url}`)
  }
})

t.test('both collections full of their largest items, at the pods\' ceiling, take at most half of the pods\' old space', async (t) => {
  const { oldSpace, maxItems } = podLimits()
  t.ok(oldSpace > 0, `--max-old-space-size: ${oldSpace / 2 ** 20} MiB`)
  const user = heapPerItem(JSON.stringify(LARGEST_USER))
  const product = heapPerItem(JSON.stringify(LARGEST_PRODUCT))
  const full = maxItems * (user + product)
  t.ok(user > 2 * (NAME_MAX_LENGTH + EMAIL_MAX_LENGTH) * 2, `a user: ${user.toFixed(0)} bytes (its strings are two bytes a code unit)`)
  t.ok(full <= oldSpace / 2, `${maxItems} users (${user.toFixed(0)} bytes each) and as many products (${product.toFixed(0)} bytes): ` +
    `${(full / 2 ** 20).toFixed(1)} MiB, at most half of ${oldSpace / 2 ** 20} MiB`)
})
