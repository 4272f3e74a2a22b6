import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app.js'
import { CLIENT_SERVER_ENV, generatedFiles } from './codegen.js'
import { loadConfig } from '../../lib/config/load.js'
import { projectRoot } from '../../lib/project-root.js'

/**
 * Builds the service in-process, takes its OpenAPI document and writes the generated files of the
 * client into `dir`; answers their names. test/client/generate.test.ts compares them with the
 * committed ones. The generator lives here, apart from client/, the package users install.
 */
export async function writeClient (dir = path.join(projectRoot, 'client')): Promise<string[]> {
  // No load shedding: on a busy machine the app may look overloaded while it starts.
  const config = loadConfig({ ...CLIENT_SERVER_ENV, PRESSURE_MAX_EVENT_LOOP_DELAY: '0' })
  const server = Fastify(serverOptions(config, { logger: false }))
  await server.register(app, { config })
  const res = await server.inject({ url: '/openapi.json' })
  await server.close()
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}: ${res.body}`)
  const document = res.body
  const files = await generatedFiles(document)
  for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text)
  return Object.keys(files)
}

// `npm run client` (node dist/scripts/client/generate.js).
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log((await writeClient()).map((name) => `client/${name}`).join('\n'))
