// Where a function is defined, by V8's own record of it: the request path (./request-path.ts) and
// the routes' contracts (./route-contracts.ts) name the file of each hook, handler and caller.
import path from 'node:path'
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import { projectRoot } from '../../lib/project-root.js'

/** Where functions are defined, by V8's own record of each function (the inspector protocol). */
export class Locations {
  readonly #session = new Session()
  readonly #scripts = new Map<string, string>()

  async open () {
    this.#session.connect()
    this.#session.on('Debugger.scriptParsed', ({ params }) => { this.#scripts.set(params.scriptId, params.url) })
    await this.#session.post('Debugger.enable')
  }

  /** The file of a function (of its target, for a bound one): a project path, or the package of a dependency. */
  async of (fn: Function): Promise<string> {
    const key = `__requestPathFunction${Math.random().toString(36).slice(2)}`
    Object.assign(globalThis, { [key]: fn })
    try {
      const { result } = await this.#session.post('Runtime.evaluate', { expression: `globalThis.${key}` })
      let objectId = result.objectId as string
      for (;;) {
        const { internalProperties = [] } = await this.#session.post('Runtime.getProperties', { objectId, ownProperties: true })
        const internal = (name: string) => internalProperties.find((property) => property.name === name)?.value
        const target = internal('[[TargetFunction]]')
        if (target?.objectId !== undefined) { objectId = target.objectId; continue }
        const location = internal('[[FunctionLocation]]')?.value as { scriptId: string } | undefined
        const url = location === undefined ? undefined : this.#scripts.get(location.scriptId)
        return url === undefined ? '(native)' : describeFile(url)
      }
    } finally {
      Reflect.deleteProperty(globalThis, key)
    }
  }

  close () {
    this.#session.disconnect()
  }
}

/** A script URL as the listing names it: `plugins/not-found.ts`, or `@fastify/compress` for a dependency. */
export function describeFile (url: string): string {
  const file = url.startsWith('file:') ? fileURLToPath(url) : url
  const relative = path.relative(projectRoot, file).split(path.sep).join('/')
  const dependency = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(relative)
  return dependency === null ? relative : (dependency[1] as string)
}
