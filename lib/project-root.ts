import fs from 'node:fs'
import path from 'node:path'

/** The directory holding package.json, both from the sources and from dist/. */
function findProjectRoot (from: string): string {
  let dir = from
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) return from
    dir = parent
  }
  return dir
}

export const projectRoot = findProjectRoot(import.meta.dirname)
