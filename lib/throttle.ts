/**
 * A report of events made at most once every `intervalMs`: the first event at once, then, with the
 * first event after each interval, how many there were since the last report, that one included
 * (with its arguments). A flood of events (refused connections, refused logins, failed exports) is
 * a log line per interval, not one each, and the line says how many it stands for.
 */
export function throttled<A extends unknown[]> (intervalMs: number, report: (count: number, ...args: A) => void, now = () => Date.now()): (...args: A) => void {
  let count = 0
  let reportedAt = -Infinity
  return (...args) => {
    count++
    const time = now()
    if (time - reportedAt < intervalMs) return
    reportedAt = time
    const events = count
    count = 0
    report(events, ...args)
  }
}
