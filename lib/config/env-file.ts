import fs from 'node:fs'
import util from 'node:util'

/**
 * Loads `.env` of the working directory into process.env when there is one, as `fastify start`
 * does: variables already set win over the file. Answers the names the file sets ([] without one).
 */
export function loadEnvFile (): string[] {
  let text: string
  try {
    text = fs.readFileSync('.env', 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  process.loadEnvFile()
  return Object.keys(util.parseEnv(text))
}
