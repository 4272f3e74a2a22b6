import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import Fastify from 'fastify'
import { projectRoot } from '../../lib/project-root.js'
import { build } from '../helpers/index.js'

// One way from a route to lib/ (routes/README.md): a route imports the plain modules it uses. A
// decorator is for what the service holds or makes from its settings (fastify.config, fastify.store),
// never a function of lib/ passed on as it is: that would be a second way to the same code.

/** Every export of every module of lib/, by value, with its module and name. */
async function libExports (): Promise<Map<unknown, string>> {
  const found = new Map<unknown, string>()
  const files = fs.globSync('lib/**/*.ts', { cwd: projectRoot }).sort()
  for (const file of files) {
    const module = await import(pathToFileURL(path.join(projectRoot, file)).href) as Record<string, unknown>
    for (const [name, value] of Object.entries(module)) {
      if (typeof value === 'function' || (typeof value === 'object' && value !== null)) found.set(value, `${file}: ${name}`)
    }
  }
  return found
}

t.test('no decorator of the service is a function or an object of lib/ as it is', async (t) => {
  const exports = await libExports()
  t.ok(exports.size > 100, 'the modules of lib/ are read')
  // The instance a route file gets: the app's own context (app.ts is encapsulated), its prefix's on top.
  let routes: object | undefined
  await build(t, {}, { onRoute (route) { if (route.url === '/colors') routes = this } })
  const bare = new Set(Object.keys(Fastify()))
  const decorators = new Map<string, unknown>()
  for (let instance = routes; instance != null; instance = Object.getPrototypeOf(instance)) {
    for (const name of Object.keys(instance)) {
      if (!bare.has(name) && !decorators.has(name)) decorators.set(name, Reflect.get(instance, name))
    }
  }
  t.ok(decorators.has('store') && decorators.has('config'), 'the decorators are found')
  const passedOn = [...decorators].filter(([, value]) => exports.has(value)).map(([name, value]) => `fastify.${name} is ${exports.get(value)}`)
  t.same(passedOn, [], 'a route imports these from lib/ instead')
})
