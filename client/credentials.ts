import type { paths } from './schema.js'
import type { Operations } from './operations.js'
import type { Method, Operation } from './operation.js'

/** Credentials, sent to the operations that need them: Basic (the service's BASIC_AUTH_USERS) and Bearer (its API_TOKENS). */
export interface Credentials {
  basic?: { username: string, password: string }
  bearer?: string
}

/** The operations that need a scheme's credentials. */
export type NeedingCredentials<S extends 'basic' | 'bearer'> = { [O in Operation]: Operations[O] extends { security: S } ? O : never }[Operation]

/** The operations a client given credentials `C` cannot call: those needing credentials it lacks. */
export type Unavailable<C> =
  | (C extends { basic: object } ? never : NeedingCredentials<'basic'>)
  | (C extends { bearer: string } ? never : NeedingCredentials<'bearer'>)

/**
 * What the compiler says of a call of `O` by a client without the credentials it needs: the type
 * its path (or operation) then has, which no argument is.
 */
export type MissingCredentials<O extends Operation> = Operations[O] extends { security: 'bearer' }
  ? `${O} needs a Bearer token: createApiClient({ credentials: { bearer } })`
  : `${O} needs Basic credentials: createApiClient({ credentials: { basic } })`

/** `P`, the path (or the operation) of `O`, if a client given credentials `C` can call `O`; else the message of the credentials it lacks. */
export type Callable<O, P, C> = O extends Unavailable<C> ? MissingCredentials<O & Operation> : P

/** The methods of a path that a client given credentials `C` cannot call, in lower case. */
type UnavailableMethods<P extends keyof paths, C> = Unavailable<C> extends infer O
  ? O extends `${infer M extends Uppercase<Method>} ${P}` ? Lowercase<M> : never
  : never

/**
 * The document's paths as a client given credentials `C` sees them: an operation that needs
 * credentials it was not given is absent (`api.GET('/list-all/users')` does not compile without
 * Basic credentials).
 */
export type AvailablePaths<C> = {
  [P in keyof paths]: Omit<paths[P], UnavailableMethods<P, C>> & { [M in UnavailableMethods<P, C>]?: never }
}

/** `Basic <credentials>` (RFC 7617): `user:password` in base64 over its UTF-8 bytes, as browsers and Node both can. */
export function basicAuthorization (username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`)
  return `Basic ${btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''))}`
}
