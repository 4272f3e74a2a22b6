import { EnvSchema } from './schema.js'

/**
 * Variables of other programs that a .env may well hold for the service's process: Node's own,
 * fastify-cli's options (`FASTIFY_*`), the PostgreSQL driver's defaults (`PG*`), OpenTelemetry's,
 * and the commit the build records (GIT_COMMIT, a label of app_build_info: lib/metrics/build-info.ts).
 */
const OTHERS_VARIABLES = /^(NODE_\w+|UV_THREADPOOL_SIZE|TZ|FASTIFY_\w+|PG[A-Z]+|OTEL_\w+|GIT_COMMIT)$/

/**
 * Edit distance between two names: insertions, deletions, substitutions, and two neighbouring
 * letters swapped, which is one slip (PROT for PORT), not two substitutions.
 */
function distance (a: string, b: string): number {
  const rows = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const previous = rows[i - 1]!
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j]!, rows[i - 2]![j - 2]! + 1)
    }
    rows.push(current)
  }
  return rows[a.length]![b.length]!
}

/**
 * The names among `names` (a .env file's) that no setting of the service has, each with the
 * setting it most likely meant (a typo: at most a third of the name's letters apart), else none.
 * Such a variable is silently ignored otherwise, and the setting it meant keeps its default.
 */
export function unknownSettings (names: readonly string[]): Array<{ name: string, closest?: string }> {
  const settings = Object.keys(EnvSchema.properties)
  return names.filter((name) => !(name in EnvSchema.properties) && !OTHERS_VARIABLES.test(name)).map((name) => {
    const [closest] = settings
      .map((setting) => ({ setting, apart: distance(name.toUpperCase(), setting) }))
      .filter(({ apart }) => apart <= Math.max(1, Math.floor(name.length / 3)))
      .sort((a, b) => a.apart - b.apart)
    return closest === undefined ? { name } : { name, closest: closest.setting }
  })
}

/** Warns, a line each, of the variables of .env (`names`) that the service does not read. */
export function warnUnknownSettings (log: { warn: (fields: object, msg: string) => void }, names: readonly string[]): void {
  for (const { name, closest } of unknownSettings(names)) {
    log.warn({ variable: name, closest }, `.env sets ${name}, which is no setting of the service: ignored${closest === undefined ? '' : ` (did you mean ${closest}?)`}`)
  }
}
