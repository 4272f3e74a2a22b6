import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import app, { serverOptions } from '../app.js'
import { loadConfig, projectRoot } from '../plugins/config.js'
import { CLIENT_SERVER_ENV, generatedFiles } from './codegen.js'

/**
 * Builds the service in-process, takes its OpenAPI document and writes the generated files of the
 * client into `dir`; answers their names. test/client-generated.test.ts compares them with the
 * committed ones.
 */
export async function writeClient (dir = path.join(projectRoot, 'client')): Promise<string[]> {
  const config = loadConfig({ ...CLIENT_SERVER_ENV })
  const server = Fastify({ ...serverOptions(config), logger: false })
  await server.register(app, { config })
  const document = (await server.inject({ url: '/openapi.json' })).body
  await server.close()
  const files = await generatedFiles(document)
  for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text)
  return Object.keys(files)
}

// `npm run client` (node dist/client/generate.js).
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log((await writeClient()).map((name) => `client/${name}`).join('\n'))
