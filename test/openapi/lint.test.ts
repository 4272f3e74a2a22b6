import path from 'node:path'
import t from 'tap'
import { lintFromString, loadConfig } from '@redocly/openapi-core'
import { build } from '../helpers/index.js'
import { projectRoot } from '../../lib/project-root.js'

/** Check 4c: Redocly's recommended rules (redocly.yaml) find no error in the document, whatever the settings. */
t.test('Redocly lint, recommended rules: no error; the one warning is GET /failing, which never succeeds', async (t) => {
  const config = await loadConfig({ configPath: path.join(projectRoot, 'redocly.yaml') })
  const settings: Array<Record<string, string>> = [{}, { API_TOKENS: 'secret-token', BASE_PATH: '/api', AUTH_REALM: 'other realm' }]
  for (const env of settings) {
    const server = await build(t, env)
    const source = (await server.inject({ url: '/openapi.json' })).body
    const problems = await lintFromString({ source, absoluteRef: path.join(projectRoot, 'openapi.json'), config })
    const found = problems.map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
    t.same(found.filter((problem) => problem.startsWith('error')), [], `no error (${JSON.stringify(env)})`)
    t.same(found.filter((problem) => !problem.startsWith('error')),
      ['warn operation-2xx-response #/paths/~1failing/get/responses: Operation must have at least one `2XX` response.'], 'one warning')
  }
})
