import assert from 'node:assert/strict'
import t from 'tap'
import fc from 'fast-check'
import { CREDENTIAL_PARAMETERS, CREDENTIAL_SUFFIXES, KEY_PREFIXES, REDACTED, isCredentialName, redactQuery } from '../../lib/query-redaction.js'
import { QUOTE_LIMIT, quoteUrl } from '../../lib/errors.js'
import { propertyRuns } from '../helpers/property-runs.js'

t.test('the value of a listed parameter is redacted, its name kept; the rest of the URL is left as it is', async (t) => {
  const cases: Array<[string, string]> = [
    ['/users?token=s3cret', '/users?token=[redacted]'],
    ['/users?TOKEN=s3cret', '/users?TOKEN=[redacted]'],
    ['/users?%74oken=s3cret', '/users?%74oken=[redacted]'],
    ['/users?%54%4f%4B%45%4e=s3cret', '/users?%54%4f%4B%45%4e=[redacted]'],
    ['/users?a=1&token=x&token=y', '/users?a=1&token=[redacted]&token=[redacted]'],
    ['/users?token=', '/users?token=[redacted]'],
    ['/users?token=&sortby=age', '/users?token=[redacted]&sortby=age'],
    ['/users?sortby=age;password=hunter2', '/users?sortby=age;password=[redacted]'],
    ['/users?token=a=b=c&x=1', '/users?token=[redacted]&x=1'],
    ['/users?token=s3cret#fragment&x=1', '/users?token=[redacted]&x=1'],
    ['/users?&&token=s3cret&', '/users?&&token=[redacted]&'],
    ['/users?user[password]=p&auth.token=q&token[]=r&user%5Bpassword%5D=s', '/users?user[password]=[redacted]&auth.token=[redacted]&token[]=[redacted]&user%5Bpassword%5D=[redacted]'],
    ['/s3/object?X-Amz-Credential=AKIA&X-Amz-Signature=abc&X-Amz-Date=20240101', '/s3/object?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Date=20240101'],
    ['/cb?code=xyz&state=abc', '/cb?code=[redacted]&state=abc'],
    ['/blob?sv=2022&sig=abc%2Bdef', '/blob?sv=2022&sig=[redacted]']
  ]
  for (const [url, expected] of cases) t.equal(redactQuery(url), expected, url)
})

t.test('what is not the value of a listed parameter is not redacted', async (t) => {
  for (const url of [
    '/users', '/users?', '/users?sortby=age&name=token', '/hello?name=Ada%20Lovelace',
    // Without `=` there is no value: `token` alone says only that it was sent.
    '/users?token', '/users?token&x=1',
    // Names that merely contain a credential's, or are one only after a second decoding.
    '/users?tokens=1&token_count=2&keychain=3&%2574oken=4&to%6ben%=5&passwordless=6',
    // Words that end in "key" without being one: `key` counts only as a word of its own.
    '/users?monkey=1&turkey=2&MONKEY=3&Turkey=4&hockey=5&whiskey=6&hotkey=7&keys=8',
    // Escapes that decode to nothing: left as they are, no error.
    '/users?%zz=1&%7=2&%=3',
    // A `?` in the path, encoded, starts no query string.
    '/users/a%3Ftoken=s3cret'
  ]) t.equal(redactQuery(url), url, url)
})

t.test('credentials under any spelling: case, `-` and `_` do not count, and a name that ends as a credential\'s is one', async (t) => {
  // Each of these was logged in the clear (issue 42).
  for (const name of ['accessToken', 'access-token', 'clientSecret', 'client-secret', 'refresh-token', 'x-auth-token', 'private-key', 'db_password']) {
    t.equal(redactQuery(`/users?a=1&${name}=s3cret&b=2`), `/users?a=1&${name}=${REDACTED}&b=2`, name)
  }
  const credentials = [
    // Listed names, spelt otherwise.
    'ACCESS_TOKEN', 'Access-Token', 'accesstoken', 'Client_Secret', 'API-KEY', 'ApiKey', 'X_API_KEY', 'session-id', 'JSESSIONID', 'X-Amz-Signature', 'x_amz_signature',
    // Ending in token, secret, password, passwd, whatever comes before.
    'csrfToken', 'csrftoken', 'MY_TOKEN', 'sharedSecret', 'webhooksecret', 'adminPassword', 'NEW-PASSWORD', 'dbpasswd',
    // key as a word of its own: after a separator, capitalised, or after a known word.
    'private_key', 'signing-key', 'SSH_KEY', 'Ocp-Apim-Subscription-Key', 'privateKey', 'APIKey', 'secretKey', 'privatekey', 'SECRETKEY', 'accesskey', 'licenseKey',
    // A key that is no secret is redacted too: a value missing from a log costs less than a credential in it.
    'sort_key', 'idempotency-key'
  ]
  for (const name of credentials) t.ok(isCredentialName(name), name)
  t.equal(redactQuery('/users?user[dbPassword]=a&auth.refreshToken=b&x%2Dauth%2Dtoken=c'), `/users?user[dbPassword]=${REDACTED}&auth.refreshToken=${REDACTED}&x%2Dauth%2Dtoken=${REDACTED}`, 'nested, encoded')
  for (const name of ['monkey', 'turkey', 'MONKEY', 'TURKEY', 'Turkey', 'hockey', 'whiskey', 'donkey', 'hotkey', 'passkey', 'keychain', 'keys', 'key_id',
    'tokens', 'token_count', 'secretary', 'passwordless', 'name', 'sortby', 'count', 'code_page']) {
    t.notOk(isCredentialName(name), name)
  }
  t.ok(isCredentialName('monKey'), 'a capitalised Key is a word of its own, even in monKey: the rule does not guess')
  t.same(CREDENTIAL_SUFFIXES, ['token', 'secret', 'password', 'passwd'])
  t.ok(KEY_PREFIXES.includes('api') && KEY_PREFIXES.includes('private'))
})

t.test('the list: lowercase names, the usual credentials and the signed-URL parameters OpenTelemetry names', async (t) => {
  for (const name of CREDENTIAL_PARAMETERS) t.equal(name, name.toLowerCase(), `${name}: lowercase`)
  for (const name of ['token', 'access_token', 'refresh_token', 'id_token', 'api_key', 'apikey', 'api-key', 'key', 'password', 'passwd', 'pwd',
    'secret', 'client_secret', 'auth', 'authorization', 'signature', 'sig', 'code', 'session', 'sessionid', 'jwt', 'bearer', 'credentials',
    'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'awsaccesskeyid', 'x-goog-signature']) {
    t.ok(CREDENTIAL_PARAMETERS.has(name), name)
  }
  // The service's own query parameters are not credentials: their values stay in the logs.
  for (const name of ['name', 'sortby', 'count']) t.notOk(CREDENTIAL_PARAMETERS.has(name), name)
})

t.test('quoteUrl: a URL shortened as shorten() does, redacted in the part kept, a value cut short included', async (t) => {
  t.equal(quoteUrl('/users?token=s3cret'), '/users?token=[redacted]', 'short: whole, redacted')
  const long = `/users?token=s3cret&q=${'x'.repeat(200)}`
  t.equal(quoteUrl(long), `/users?token=[redacted]&q=${'x'.repeat(QUOTE_LIMIT - 22)}… (${long.length} characters)`, 'long: cut at the limit, then redacted')
  const cutInValue = `/users?q=${'x'.repeat(80)}&token=s3cret-and-more-of-it`
  t.equal(quoteUrl(cutInValue), `/users?q=${'x'.repeat(80)}&token=[redacted]… (${cutInValue.length} characters)`, 'a value cut short is redacted')
  t.notMatch(quoteUrl(cutInValue), /s3c/)
  const cutInName = `/users?q=${'x'.repeat(87)}&password=s3cret`
  t.equal(quoteUrl(cutInName), `/users?q=${'x'.repeat(87)}&pas… (${cutInName.length} characters)`, 'a name cut short: no value in the part kept')
  t.equal(quoteUrl(long, 2000), redactQuery(long), 'a limit of its own')
})

/** A word before a credential's last word: any letters, none at all. */
const word = fc.stringMatching(/^[a-z]{0,8}$/)

/**
 * A credential's name before its spelling: a listed one with `-` and `_` anywhere, a name ending
 * in a suffix (any case), or in `key` as a word of its own.
 */
const credentialName = fc.oneof(
  fc.tuple(fc.constantFrom(...CREDENTIAL_PARAMETERS), fc.infiniteStream(fc.constantFrom('', '', '', '-', '_')))
    .map(([name, separators]) => [...name].map((char) => `${char}${separators.next().value as string}`).join('')),
  fc.tuple(word, fc.constantFrom('', '-', '_'), fc.constantFrom(...CREDENTIAL_SUFFIXES)).map((parts) => parts.join('')),
  fc.tuple(word, fc.constantFrom('-key', '_key', '-KEY')).map((parts) => parts.join('')),
  fc.constantFrom(...KEY_PREFIXES).map((prefix) => `${prefix}key`)
)

/** A credential's name as a client may spell it: any case, any of its characters percent-encoded, maybe nested. */
const listedName = fc.tuple(
  credentialName,
  fc.infiniteStream(fc.tuple(fc.boolean(), fc.boolean())),
  fc.constantFrom('%s', '%s[]', 'user[%s]', 'auth.%s', 'a[%s][0]')
).map(([name, choices, nesting]) => {
  const spelt = [...name].map((char) => {
    const [upper, encoded] = choices.next().value as [boolean, boolean]
    const cased = upper ? char.toUpperCase() : char
    return encoded ? `%${cased.charCodeAt(0).toString(16).padStart(2, '0')}` : cased
  }).join('')
  return nesting.replace('%s', spelt)
})

/** The listed names as they are compared: lowercase, without `-` and `_`. */
const listedWords = new Set([...CREDENTIAL_PARAMETERS].map((name) => name.replace(/[-_]/g, '')))

/**
 * A name that is no credential's nor nests one: lowercase letters, digits and `_`, neither a
 * listed name nor one ending in a suffix or in `key` at all (monkey's side is tested above).
 */
const otherName = fc.stringMatching(/^[a-z0-9_]{1,12}$/).filter((name) => {
  const bare = name.replace(/_/g, '')
  return !listedWords.has(bare) && !/(token|secret|passwd|password|key)$/.test(bare)
})

/** A value as a URL carries it: no separator, possibly empty. */
const value = fc.stringMatching(/^[A-Za-z0-9%+=.~_-]{0,20}$/)

/** A secret value: a marker nothing else in the generated URLs can spell (no other value holds `#`). */
const secret = fc.stringMatching(/^[a-z0-9]{0,12}$/).map((tail) => `#S3CRET#${tail}`)

const path = fc.stringMatching(/^(\/[a-z0-9%.-]{0,10}){1,4}$/)
const separator = fc.constantFrom('&', ';')

t.test('property: no value of a listed parameter survives, every other pair is kept as it was', async (t) => {
  const pair = fc.oneof(
    fc.tuple(listedName, secret).map(([name, value]) => ({ name, value, listed: true })),
    fc.tuple(otherName, value).map(([name, value]) => ({ name, value, listed: false }))
  )
  fc.assert(fc.property(path, fc.array(fc.tuple(pair, separator), { maxLength: 12 }), (path, pairs) => {
    const query = pairs.map(([{ name, value }, sep], at) => `${at === 0 ? '' : sep}${name}=${value}`).join('')
    const url = `${path}?${query}`
    const redacted = redactQuery(url)
    assert.ok(!redacted.includes('S3CRET'), `${url} → ${redacted}`)
    const expected = pairs.map(([{ name, value, listed }, sep], at) => `${at === 0 ? '' : sep}${name}=${listed ? REDACTED : value}`).join('')
    assert.equal(redacted, `${path}?${expected}`)
  }), { numRuns: propertyRuns(2000), seed: 30 })
  t.pass('2,000 URLs')
})

t.test('property: a URL without a listed parameter comes back unchanged', async (t) => {
  fc.assert(fc.property(path, fc.array(fc.tuple(otherName, fc.option(value), separator), { maxLength: 12 }), (path, pairs) => {
    const url = `${path}?${pairs.map(([name, value, sep]) => `${name}${value === null ? '' : `=${value}`}${sep}`).join('')}`
    assert.equal(redactQuery(url), url)
  }), { numRuns: propertyRuns(2000), seed: 30 })
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }).filter((text) => !text.includes('?')), (url) => {
    assert.equal(redactQuery(url), url)
  }), { numRuns: propertyRuns(2000), seed: 30 })
  t.pass('4,000 URLs')
})

t.test('property: redacting twice is redacting once', async (t) => {
  const anyPair = fc.tuple(fc.oneof(listedName, otherName), fc.oneof(secret, value), separator)
  fc.assert(fc.property(path, fc.array(anyPair, { maxLength: 12 }), (path, pairs) => {
    const once = redactQuery(`${path}?${pairs.map(([name, value, sep]) => `${name}=${value}${sep}`).join('')}`)
    assert.equal(redactQuery(once), once)
  }), { numRuns: propertyRuns(1000), seed: 30 })
  t.pass('1,000 URLs')
})

t.test('every listed name and every key prefix counts: a name taken off the lists fails here', async (t) => {
  const listed = ['password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'credential', 'credentials', 'auth', 'authorization',
    'bearer', 'jwt', 'token', 'auth_token', 'api_token', 'apitoken', 'key', 'apikey', 'api_key', 'api-key', 'x-api-key', 'private_key',
    'session', 'sessionid', 'session_id', 'jsessionid', 'phpsessid', 'access_token', 'refresh_token', 'id_token', 'id_token_hint', 'code',
    'code_verifier', 'client_secret', 'client_assertion', 'assertion', 'oauth_token', 'oauth_token_secret', 'oauth_verifier',
    'oauth_signature', 'signature', 'sig', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'awsaccesskeyid',
    'x-goog-signature', 'x-goog-credential']
  t.same([...CREDENTIAL_PARAMETERS].sort(), listed.toSorted())
  for (const name of listed) t.equal(redactQuery(`/x?${name}=v&a=1`), `/x?${name}=${REDACTED}&a=1`, name)
  const prefixes = ['api', 'access', 'private', 'secret', 'secure', 'client', 'signing', 'session', 'master', 'auth', 'encryption', 'ssh', 'license']
  t.same(KEY_PREFIXES, prefixes)
  for (const prefix of prefixes) t.ok(isCredentialName(`${prefix}key`), `${prefix}key`)
})

t.test('a name is a credential\'s as a whole, a key of it, or decoded from well-formed escapes only', async (t) => {
  for (const name of ['keymonkey', 'key-turkey', 'KEYmonkey', 'x-keymonkey', 'api_keychain_turkey']) t.notOk(isCredentialName(name), `${name}: key as a word, but not the last`)
  for (const url of [
    // Brackets and dots split a name into keys only where they nest: none of these keys is a credential's.
    '/x?user[name]=Ada&a.b=1&token]x=2',
    // Escapes whose digits are not hexadecimal, which a looser decoding would read as `sig`, `token`, `pass`, `api_key`.
    '/x?s%6@g=1&s%6`g=2&to%5ren=3&to%7+en=4&p%6zss=5&api%6zkey=6'
  ]) t.equal(redactQuery(url), url, url)
  t.equal(redactQuery('/x?user.token=1&a[b][token]=2'), `/x?user.token=${REDACTED}&a[b][token]=${REDACTED}`)
})

t.test('a name judged once is judged alike again, while the names judged are kept and once they no longer are', async (t) => {
  const urls = (tag: string): Array<[string, string]> => [
    [`/x?${tag}_token=v&${tag}_name=w`, `/x?${tag}_token=[redacted]&${tag}_name=w`],
    [`/x?${tag}%5Bpassword%5D=v&${tag}.sort=w`, `/x?${tag}%5Bpassword%5D=[redacted]&${tag}.sort=w`],
    [`/x?${'a'.repeat(70)}Key=v&${'b'.repeat(70)}=w`, `/x?${'a'.repeat(70)}Key=[redacted]&${'b'.repeat(70)}=w`]
  ]
  // Judged, then looked up: the same answer.
  for (const [url, expected] of [...urls('first'), ...urls('first')]) t.equal(redactQuery(url), expected, url)
  // Past the most names kept: judged each time, still the same answer.
  for (let n = 0; n < 1100; n++) redactQuery(`/x?filler${n}=1&filler${n}_secret=2`)
  for (const [url, expected] of [...urls('first'), ...urls('later'), ...urls('later')]) t.equal(redactQuery(url), expected, url)
})
