// Plain TypeScript, no imports and nothing but types to strip: scripts/dev.js, which Node runs
// as it is, imports this file too (Node 24 strips the types), so that `npm run dev` reads a second
// signal as the service does.

/**
 * How long after a close signal the same signal again is that one delivered twice, not a second
 * request (docs/operations.md, "Probes, shutdown and overload"). A terminal's Ctrl-C goes to every
 * process of its foreground group, npm included, and npm forwards what it gets to the script it
 * runs: `npm start` execs the server, so the server has the SIGINT from the terminal and npm's copy,
 * within a few milliseconds. A second, later, exits at once.
 */
export const SIGNAL_ECHO_MS = 1000

/** What listens for signals: the process. */
export interface SignalSource {
  on (event: string, listener: (signal: string) => void): unknown
}

export interface CloseSignalHandlers {
  /** The first signal: begin the close. */
  close (signal: string): void
  /** Any signal after it but its echo: the close is taking too long for whoever sent it. */
  force (signal: string): void
}

/**
 * Listens for `signals` on `source` for the life of the process: the first calls `close`; the
 * same signal within SIGNAL_ECHO_MS of it is ignored (its echo); any other later one calls `force`.
 */
export function onCloseSignals (signals: readonly string[], { close, force }: CloseSignalHandlers,
  source: SignalSource = process, now: () => number = () => performance.now()): void {
  let first: { signal: string, at: number } | undefined
  const listener = (signal: string) => {
    if (first === undefined) {
      first = { signal, at: now() }
      close(signal)
    } else if (signal !== first.signal || now() - first.at >= SIGNAL_ECHO_MS) {
      force(signal)
    }
  }
  for (const signal of signals) source.on(signal, listener)
}
