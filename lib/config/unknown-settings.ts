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

/** The setting `name` is closest to, when at most `within` edits apart. */
function closestSetting (name: string, within: number): string | undefined {
  return Object.keys(EnvSchema.properties)
    .map((setting) => ({ setting, apart: distance(name.toUpperCase(), setting) }))
    .filter(({ apart }) => apart <= within)
    .sort((a, b) => a.apart - b.apart)[0]?.setting
}

/**
 * The names among `names` (a .env file's) that no setting of the service has, each with the
 * setting it most likely meant (a typo: at most a third of the name's letters apart), else none.
 * Such a variable is silently ignored otherwise, and the setting it meant keeps its default.
 */
export function unknownSettings (names: readonly string[]): Array<{ name: string, closest?: string }> {
  return names.filter((name) => !(name in EnvSchema.properties) && !OTHERS_VARIABLES.test(name)).map((name) => {
    const closest = closestSetting(name, Math.max(1, Math.floor(name.length / 3)))
    return closest === undefined ? { name } : { name, closest }
  })
}

/**
 * What the environment of every process holds (the shell's, the system's, npm's, Docker's) and
 * Kubernetes injects for each Service (`<NAME>_SERVICE_HOST`, `<NAME>_PORT_3000_TCP_ADDR`…):
 * names that only look like a setting (HOME is two edits from HOST).
 */
const EVERY_PROCESS = /^(HOME|PATH|PWD|OLDPWD|USER|LOGNAME|SHELL|HOSTNAME|TERM|LANG|LANGUAGE|TMPDIR|SHLVL|MAIL|EDITOR|PAGER|DISPLAY|INIT_CWD|COLORTERM|(LC|XDG|SSH|npm|KUBERNETES)_\w+|\w+_SERVICE_(HOST|PORT)\w*|\w+_PORT(_\d+_(TCP|UDP|SCTP)\w*)?)$/

/**
 * The names of the process's environment (`names`) that are no setting but one or two edits from
 * one (two only for names of six letters or more: a short name two edits away is another word),
 * each with that setting: DATABSE_URL is a DATABASE_URL the service would never read.
 */
export function mistypedSettings (names: readonly string[]): Array<{ name: string, closest: string }> {
  return names.filter((name) => !(name in EnvSchema.properties) && !OTHERS_VARIABLES.test(name) && !EVERY_PROCESS.test(name))
    .flatMap((name) => {
      const closest = closestSetting(name, name.length >= 6 ? 2 : 1)
      return closest === undefined ? [] : [{ name, closest }]
    })
}

/**
 * Warns, a line each, of the variables of .env (`fromFile`) that the service does not read, and of
 * the environment's others (`environment`) that look like a setting mistyped.
 */
export function warnUnknownSettings (log: { warn: (fields: object, msg: string) => void }, fromFile: readonly string[], environment: readonly string[] = []): void {
  for (const { name, closest } of unknownSettings(fromFile)) {
    log.warn({ variable: name, closest }, `.env sets ${name}, which is no setting of the service: ignored${closest === undefined ? '' : ` (did you mean ${closest}?)`}`)
  }
  for (const { name, closest } of mistypedSettings(environment.filter((name) => !fromFile.includes(name)))) {
    log.warn({ variable: name, closest }, `the environment sets ${name}, which is no setting of the service: ignored (did you mean ${closest}?)`)
  }
}
