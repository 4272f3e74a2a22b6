/** Where one of the service's listeners listens, and the settings that said so. */
export interface Listener {
  host: string
  port: number
  /** HOST, or METRICS_HOST when it is set (unset, the metrics listener takes HOST's). */
  hostSetting: 'HOST' | 'METRICS_HOST'
  portSetting: 'PORT' | 'METRICS_PORT'
}

/** A failed listen or lookup, as Node raises it (`listen EADDRINUSE: address already in use 127.0.0.1:3000`). */
type NetError = NodeJS.ErrnoException & { hostname?: string, address?: string, port?: number }

/**
 * The setting to blame when `listener` could not listen, as a line of InvalidConfiguration
 * (`env/PORT: 3000 is in use by another process on 127.0.0.1: stop it or choose another port`),
 * or undefined when `err` is not about its address or its port. A host that does not resolve, or
 * that is no address of this machine, is the host's setting; a port in use, or refused (EACCES:
 * below 1024 without the privilege), the port's.
 */
export function listenProblem (err: unknown, { host, port, hostSetting, portSetting }: Listener): string | undefined {
  const { code, syscall, hostname, address } = err as NetError
  if (syscall === 'getaddrinfo' && hostname === host) {
    return `env/${hostSetting}: ${host} does not resolve to an address (getaddrinfo ${code}): give an address of this machine, or a name that resolves to one`
  }
  if (syscall !== 'listen' || (port !== 0 && (err as NetError).port !== port)) return undefined
  if (code === 'EADDRNOTAVAIL') {
    return `env/${hostSetting}: ${host} is no address of this machine (listen EADDRNOTAVAIL): give one of its addresses, or 0.0.0.0 for all of them`
  }
  if (code === 'EADDRINUSE') {
    return `env/${portSetting}: ${port} is in use by another process on ${address}: stop it or choose another port`
  }
  return `env/${portSetting}: ${port} cannot be listened on at ${address} (${(err as Error).message})`
}
