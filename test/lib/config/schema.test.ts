import fs from 'node:fs'
import path from 'node:path'
import util from 'node:util'
import t from 'tap'
import { loadConfig } from '../../../lib/config/load.js'
import { SETTING_NAMES } from '../../../lib/config/schema.js'
import { unknownSettings } from '../../../lib/config/unknown-settings.js'
import { projectRoot } from '../../../lib/project-root.js'

t.test('.env.example: every setting, all commented out; a default line, uncommented, changes nothing in production', async (t) => {
  const text = fs.readFileSync(path.join(projectRoot, '.env.example'), 'utf8')
  t.same(util.parseEnv(text), {}, 'copied to .env as it is, it sets nothing')
  const defaults = [...text.matchAll(/^# ([A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name as string, value as string] as const)
  const examples = [...text.matchAll(/^# e\.g\. ([A-Z_]+)=/gm)].map(([, name]) => name as string)
  t.same([...defaults.map(([name]) => name), ...examples].filter((name) => SETTING_NAMES.includes(name)).sort(), [...SETTING_NAMES].sort(), 'each setting once')
  t.same(unknownSettings(defaults.map(([name]) => name)), [], 'a default line is a setting of the service')
  const production = { NODE_ENV: 'production', STORE: 'memory' }
  const base = loadConfig(production)
  for (const [name, value] of defaults) {
    t.same(loadConfig({ ...production, [name]: value }), base, `${name}=${value} is production's default`)
  }
})
