import fs from 'node:fs'
import path from 'node:path'
import { projectRoot } from './project-root.js'

/** The service's name, version and one-line description, from package.json. */
export const packageInfo = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string
  version: string
  description: string
}
