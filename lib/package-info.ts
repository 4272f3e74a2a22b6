import fs from 'node:fs'
import path from 'node:path'
import { projectRoot } from './project-root.js'

/** The service's name, version and one-line description, and the Node it runs on, from package.json. */
export const packageInfo = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string
  version: string
  description: string
  engines: { node: string }
}

/** The one Node major the service supports: `engines`' (the image's, the tests'; test/node.test.ts keeps them one). */
export const SUPPORTED_NODE = Number(/\d+/.exec(packageInfo.engines.node)?.[0])

/** What to say of running on Node `version` (process.versions.node), if it is not the supported one. */
export function nodeWarning (version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0])
  return major === SUPPORTED_NODE ? undefined : `Node ${version} runs the service, which supports Node ${SUPPORTED_NODE} (the image's): run it on Node ${SUPPORTED_NODE}`
}
