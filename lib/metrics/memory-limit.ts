import { family } from './text-format.js'

/**
 * The memory limit Node sees (`process.constrainedMemory()`: the cgroup's, in a container), in
 * bytes; undefined when there is none. libuv answers 0 when it cannot tell, and 2^64 − 1 (2^64 once
 * a JavaScript number) for a cgroup without a limit (`max`), cgroup v1's "unlimited" included:
 * anything past Number.MAX_SAFE_INTEGER (8 PiB) is no limit any machine has.
 */
export function memoryLimit (read: () => number | undefined = () => process.constrainedMemory()): number | undefined {
  const limit = read()
  return limit === undefined || !(limit > 0) || limit > Number.MAX_SAFE_INTEGER ? undefined : limit
}

/**
 * `app_memory_limit_bytes`, read at each scrape (a container's limit can be changed while it runs);
 * absent without a limit, so that an alert on RSS over the limit has nothing to compare to.
 */
export function memoryLimitSeries (read?: () => number | undefined): string {
  const limit = memoryLimit(read)
  return family('app_memory_limit_bytes', 'gauge', 'The memory limit of the process (its container\'s), as Node sees it; absent when there is none',
    limit === undefined ? [] : [[{}, limit]])
}
