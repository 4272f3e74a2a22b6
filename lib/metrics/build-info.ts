import { packageInfo } from '../package-info.js'
import { family } from './text-format.js'

/** The commit label when nothing says which commit was built. */
export const UNKNOWN_COMMIT = 'unknown'

/**
 * `app_build_info`, always 1, whose labels say what runs: the version of package.json, the commit
 * (GIT_COMMIT, set where the image is built or deployed; `unknown` without it: the build records
 * none) and Node's version. A query joins it to other series (`* on (instance) group_left(version)`)
 * to tell which version a figure came from, and counts the versions running during a rollout.
 */
export function buildInfo (env: NodeJS.ProcessEnv = process.env, nodeVersion = process.version): string {
  const commit = env.GIT_COMMIT?.trim() || UNKNOWN_COMMIT
  return family('app_build_info', 'gauge', 'What runs: the version of package.json, the commit built (GIT_COMMIT), the Node version; always 1',
    [[{ version: packageInfo.version, commit, node_version: nodeVersion }, 1]])
}
