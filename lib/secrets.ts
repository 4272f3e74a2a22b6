import { createHash, timingSafeEqual } from 'node:crypto'

/** What the server knows of a user after verifying its credentials. */
export interface AuthUser {
  name: string
}

/** Secrets are compared as SHA-256 digests: equal lengths, so timingSafeEqual applies to any input. */
const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest()

/**
 * A constant-time membership test for a list of secrets: the candidate is compared with every
 * secret, whether or not an earlier one matched, and the index of the match is returned (-1: none).
 * `equal` compares two digests (the tests count its calls).
 */
export function secretMatcher (secrets: readonly string[], equal = timingSafeEqual): (candidate: string) => number {
  const digests = secrets.map(digest)
  return function match (candidate) {
    const given = digest(candidate)
    let found = -1
    for (const [index, expected] of digests.entries()) {
      if (equal(given, expected) && found === -1) found = index
    }
    return found
  }
}

/**
 * Verifies a Basic user name and password against `user:password` pairs. The pair is compared as
 * one secret, so a wrong password and an unknown user take the same path and the same time.
 * User names cannot contain a colon (RFC 7617), so `user:password` names exactly one pair.
 */
export function credentialsVerifier (pairs: string | undefined, equal = timingSafeEqual): (user: string, password: string) => AuthUser | null {
  const entries = pairs === undefined ? [] : pairs.split(',')
  const match = secretMatcher(entries, equal)
  const users = entries.map((entry) => entry.slice(0, entry.indexOf(':')))
  return (user, password) => {
    const index = match(`${user}:${password}`)
    return index === -1 ? null : { name: users[index] as string }
  }
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 b64token), or undefined. */
export function bearerToken (header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header)?.[1]
}

/**
 * Whether routes with `config.auth: 'bearer'` need a token: when API_TOKENS lists some, and always
 * in production, where no API_TOKENS means that no token is accepted rather than that the writes
 * are open (docs/contract.md, Authentication). Outside production, no API_TOKENS leaves them open.
 */
export function bearerRequired (config: { API_TOKENS?: string | undefined, NODE_ENV: string }): boolean {
  return config.API_TOKENS !== undefined || config.NODE_ENV === 'production'
}
