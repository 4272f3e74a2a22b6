/** What a credential's value becomes in a logged URL (and the censor of logged headers). */
export const REDACTED = '[redacted]'

/**
 * Query parameters whose values are credentials, by lowercase name (and any spelling of it:
 * isCredentialName), beside the names that end as a credential's: their values never reach a
 * log line (spans hold no query string: lib/tracing.ts). The service reads none of them (its
 * credentials come in `Authorization`), but clients and signed-URL tools put them in URLs all the
 * same.
 */
export const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set([
  // Passwords, keys and tokens by their usual names.
  'password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'credential', 'credentials',
  'auth', 'authorization', 'bearer', 'jwt', 'token', 'auth_token', 'api_token', 'apitoken',
  'key', 'apikey', 'api_key', 'api-key', 'x-api-key', 'private_key',
  // Session ids, which some servers carry in the URL when cookies are off.
  'session', 'sessionid', 'session_id', 'jsessionid', 'phpsessid',
  // OAuth 2.0 and OpenID Connect: tokens, the authorization code and what proves the client.
  'access_token', 'refresh_token', 'id_token', 'id_token_hint', 'code', 'code_verifier',
  'client_secret', 'client_assertion', 'assertion',
  // OAuth 1.0a.
  'oauth_token', 'oauth_token_secret', 'oauth_verifier', 'oauth_signature',
  // Signed URLs, as OpenTelemetry's conventions for url.query list them: AWS SigV4 and SigV2,
  // CloudFront, Azure SAS (sig), Google Cloud Storage.
  'signature', 'sig', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token',
  'awsaccesskeyid', 'x-goog-signature', 'x-goog-credential'
])

/**
 * A name's last word that makes it a credential's whatever comes before: `accessToken`,
 * `refresh-token`, `clientSecret`, `db_password`. These end almost no other word; `key` does.
 */
export const CREDENTIAL_SUFFIXES: readonly string[] = ['token', 'secret', 'password', 'passwd']

/**
 * `key` ends many words (`monkey`, `turkey`, `hockey`), so it makes a credential's name only as a
 * word of its own: after `-` or `_` (`private-key`, `x_api_key`), as a capitalised word
 * (`privateKey`, `APIKey`), or after one of these words written together with it (`privatekey`).
 */
export const KEY_PREFIXES: readonly string[] = [
  'api', 'access', 'private', 'secret', 'secure', 'client', 'signing', 'session', 'master', 'auth', 'encryption', 'ssh', 'license'
]

/** A name as it is compared: lowercase, without `-` and `_` (`Access-Token`, `access_token`, `accessToken` are one). */
function normalise (name: string): string {
  const lower = name.toLowerCase()
  return lower.includes('-') || lower.includes('_') ? lower.replace(/[-_]/g, '') : lower
}

const LISTED = new Set([...CREDENTIAL_PARAMETERS].map(normalise))
/** `key` as a word after `-` or `_`; alone, it is listed. */
const KEY_WORD = /[-_]key$/i
const KEY_AFTER_PREFIX = new RegExp(`^(?:${KEY_PREFIXES.join('|')})key$`)

/**
 * Whether a parameter's name (decoded, one key of a nested name) is a credential's: listed
 * (CREDENTIAL_PARAMETERS, compared without case, `-` and `_`), or ending in one of
 * CREDENTIAL_SUFFIXES, or in `key` as a word of its own (KEY_PREFIXES).
 */
export function isCredentialName (name: string): boolean {
  const normalised = normalise(name)
  if (LISTED.has(normalised) || CREDENTIAL_SUFFIXES.some((suffix) => normalised.endsWith(suffix))) return true
  if (!normalised.endsWith('key')) return false
  return KEY_WORD.test(name) || name.endsWith('Key') || KEY_AFTER_PREFIX.test(normalised)
}

/** Where a nested name (`user[password]`, `auth.token`, `token[]`) splits into its keys. */
const NESTING = /[[\].]/

/** A name sent shorter than the shortest credential's is none: decoding, splitting and normalising only shorten it. */
const SHORTEST_NAME = Math.min(...[...LISTED, ...CREDENTIAL_SUFFIXES, 'key'].map((name) => name.length))

/** The value of a hexadecimal digit's character code, -1 for any other (NaN included). */
function hexDigit (code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  const lower = code | 0x20
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1
}

/** `%XX` escapes decoded one byte each: enough for the ASCII names listed, and a malformed escape is left as it is. */
function decodeName (name: string): string {
  let decoded = ''
  let copied = 0
  for (let at = name.indexOf('%'); at !== -1; at = name.indexOf('%', at + 1)) {
    const high = hexDigit(name.charCodeAt(at + 1))
    const low = hexDigit(name.charCodeAt(at + 2))
    if (high === -1 || low === -1) continue
    decoded += name.slice(copied, at) + String.fromCharCode(high * 16 + low)
    copied = at + 3
  }
  return decoded + name.slice(copied)
}

/** Whether a name as sent (still percent-encoded) is a credential's, itself or one of its nested keys. */
function isSentCredential (sent: string): boolean {
  const name = sent.includes('%') ? decodeName(sent) : sent
  return isCredentialName(name) ||
    ((name.includes('[') || name.includes('.')) && name.split(NESTING).some(isCredentialName))
}

/**
 * Names already judged, as sent: a service's clients send the same few names again and again, and
 * looking one up costs less than judging it (each line at info redacts its URL). The first
 * JUDGED_LIMIT names up to JUDGED_LENGTH characters are kept; a name past them is judged each time.
 */
const judged = new Map<string, boolean>()
const JUDGED_LIMIT = 1024
const JUDGED_LENGTH = 64

/** Whether the name `url` holds from `start` to `end` (still percent-encoded) is a credential's (isSentCredential). */
function isCredential (url: string, start: number, end: number): boolean {
  if (end - start < SHORTEST_NAME) return false
  const sent = url.slice(start, end)
  let credential = judged.get(sent)
  if (credential === undefined) {
    credential = isSentCredential(sent)
    if (judged.size < JUDGED_LIMIT && sent.length <= JUDGED_LENGTH) judged.set(sent, credential)
  }
  return credential
}

/**
 * A URL (a request target, `/path?query`) as logs and error messages quote it: the value of every
 * credential's query parameter (isCredentialName, matched whatever its case, `-`, `_` or
 * percent-encoding, or as a key of a nested name, each time it occurs, empty or not) replaced by REDACTED, its name
 * kept, so that a line still says which one was sent. Pairs are split at `&` and at `;` as well (a separator to some servers); a name
 * without `=` has no value to hide. A URL without a query string comes back as it is, for the cost
 * of looking for `?`; one with nothing to redact comes back as the same string. Linear in the
 * URL's length: each character of the query is read once. What logs and messages quote of a URL goes
 * through quoteUrl (lib/errors.ts), which redacts the part it keeps, not a whole 16 kB URL.
 */
export function redactQuery (url: string): string {
  const query = url.indexOf('?')
  if (query === -1) return url
  let redacted = ''
  let copied = 0
  // Each pair read once, character by character: where its name ends (its first `=`) and where it
  // ends (the next `&` or `;`, or the URL's end). A query is short, and a loop over it costs less
  // than a search for each of the three.
  const length = url.length
  for (let start = query + 1; start < length;) {
    let equals = -1
    let end = start
    for (; end < length; end++) {
      const code = url.charCodeAt(end)
      if (code === 0x26 || code === 0x3b) break
      if (code === 0x3d && equals === -1) equals = end
    }
    if (equals !== -1 && isCredential(url, start, equals)) {
      redacted += url.slice(copied, equals + 1) + REDACTED
      copied = end
    }
    start = end + 1
  }
  return copied === 0 ? url : redacted + url.slice(copied)
}
