import t from 'tap'
import { ClientInfoSchema, EmailSchema, type ClientInfo } from '../../schemas/marketing.js'
import { marketingEmail } from '../../routes/marketing/email.js'
import { assertError, build, json } from '../helpers/index.js'

const ALP: ClientInfo = {
  clientName: 'Alp Mestanogullari',
  clientEmail: 'alp@foo.com',
  clientAge: 25,
  clientInterestedIn: ['haskell', 'mathematics']
}
const ALP_EMAIL_JSON = '{"from":"great@company.com","to":"alp@foo.com","subject":"Hey Alp Mestanogullari, we miss you!",' +
  '"body":"Hi Alp Mestanogullari,\\n\\nSince you\'ve recently turned 25, have you checked out our latest haskell, mathematics products? Give us a visit!"}'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const FIELDS = ['clientName', 'clientEmail', 'clientAge', 'clientInterestedIn'] as const

/** A ClientInfo as a form: one key per field, one repeated key per interest. */
function formOf (client: Partial<Record<string, string | number | string[]>>): string {
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries(client)) {
    for (const item of [value ?? []].flat()) form.append(key, String(item))
  }
  return form.toString()
}

t.test('POST /marketing with JSON: the Email, exactly', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/marketing', payload: ALP })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, ALP_EMAIL_JSON)
})

t.test('POST /marketing with a form: the same Email', async (t) => {
  const app = await build(t)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload })
  const res = await post(formOf(ALP))
  t.equal(res.statusCode, 200)
  t.equal(res.body, ALP_EMAIL_JSON)
  const percent = await post('clientName=Alp+Mestanogullari&clientEmail=alp%40foo.com&clientAge=%2B25&clientInterestedIn=haskell&clientInterestedIn=mathematics')
  t.equal(percent.body, ALP_EMAIL_JSON, 'percent-encoded e-mail, + for spaces, a signed age')
  const typed = await app.inject({ method: 'POST', url: '/marketing', headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' }, payload: formOf(ALP) })
  t.equal(typed.body, ALP_EMAIL_JSON, 'media type compared without case or parameters')
})

t.test('interests: one is a one-element list; none gives "latest  products" (two spaces)', async (t) => {
  const app = await build(t)
  const bodyOf = async (options: { payload: string | object, headers?: Record<string, string> }) =>
    json(await app.inject({ method: 'POST', url: '/marketing', ...options })).body as string
  const one = await bodyOf({ headers: FORM, payload: formOf({ ...ALP, clientInterestedIn: ['haskell'] }) })
  t.match(one, /our latest haskell products\?/)
  const noKey = await bodyOf({ headers: FORM, payload: formOf({ clientName: 'Alp', clientEmail: 'alp@foo.com', clientAge: 25 }) })
  t.equal(noKey, 'Hi Alp,\n\nSince you\'ve recently turned 25, have you checked out our latest  products? Give us a visit!')
  const emptyJson = await bodyOf({ payload: { ...ALP, clientInterestedIn: [] } })
  t.match(emptyJson, /our latest {2}products\?/)
  const emptyValue = await bodyOf({ headers: FORM, payload: `${formOf({ ...ALP, clientInterestedIn: [] })}&clientInterestedIn=` })
  t.match(emptyValue, /our latest {2}products\?/, 'one empty interest: an empty element')
})

t.test('a form is read whole, past 1,000 pairs; every interest up to the bound, in order', async (t) => {
  const app = await build(t)
  const interests = Array.from({ length: 32 }, (_, i) => `topic${i}`)
  const res = await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: formOf({ ...ALP, clientInterestedIn: interests }) })
  t.equal(res.statusCode, 200)
  t.equal(json(res).body, `Hi Alp Mestanogullari,\n\nSince you've recently turned 25, have you checked out our latest ${interests.join(', ')} products? Give us a visit!`,
    'every interest, in order')
  const unknown = Array.from({ length: 1500 }, (_, i) => `x${i}=1`).join('&')
  const late = await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: `${unknown}&${formOf({ ...ALP, clientInterestedIn: interests })}` })
  t.equal(late.statusCode, 200, 'fields after 1,500 pairs are read')
  t.equal(json(late).body, json(res).body)
  const many = Array.from({ length: 100 }, (_, i) => `t${i}`)
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: formOf({ ...ALP, clientInterestedIn: many }) }), 400,
    'body/clientInterestedIn must NOT have more than 32 items')
})

t.test('a repeated single field in a form: the first wins; unknown fields are ignored', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: `${formOf(ALP)}&clientName=Other&clientAge=99&extra=1` })
  t.equal(res.body, ALP_EMAIL_JSON)
  const extraJson = await app.inject({ method: 'POST', url: '/marketing', payload: { ...ALP, extra: true } })
  t.equal(extraJson.body, ALP_EMAIL_JSON)
})

t.test('a missing field: 400 naming it, in JSON and in a form', async (t) => {
  const app = await build(t)
  for (const field of FIELDS) {
    const { [field]: _left, ...rest } = ALP
    assertError(t, await app.inject({ method: 'POST', url: '/marketing', payload: rest }), 400, field)
    // In a form, no clientInterestedIn key is the empty list (see above).
    if (field !== 'clientInterestedIn') {
      assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: formOf(rest) }), 400, field)
    }
  }
})

t.test('a field of the wrong type: 400 naming it (JSON is not coerced; form text is decoded strictly)', async (t) => {
  const app = await build(t)
  const jsonCases: Array<[Record<string, unknown>, string]> = [
    [{ clientAge: '25' }, 'clientAge'],
    [{ clientAge: 25.5 }, 'clientAge'],
    [{ clientAge: 9007199254740992 }, 'clientAge'],
    [{ clientName: 7 }, 'clientName'],
    [{ clientEmail: null }, 'clientEmail'],
    [{ clientInterestedIn: 'haskell' }, 'clientInterestedIn'],
    [{ clientInterestedIn: ['haskell', 1] }, 'clientInterestedIn/1']
  ]
  for (const [change, field] of jsonCases) {
    assertError(t, await app.inject({ method: 'POST', url: '/marketing', payload: { ...ALP, ...change } }), 400, field)
  }
  for (const age of ['', 'abc', '25.5', '1e3', '0x19', ' 25', '9007199254740992']) {
    const payload = formOf({ ...ALP, clientAge: age })
    assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload }), 400, 'clientAge')
  }
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', payload: [ALP] }), 400, 'body')
})

t.test('a body that is not JSON, or empty: 400', async (t) => {
  const app = await build(t)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/marketing', headers: { 'content-type': 'application/json' }, payload })
  assertError(t, await post('{"clientName": "x",'), 400)
  assertError(t, await post(''), 400)
  assertError(t, await post('null'), 400)
  assertError(t, await post('"text"'), 400)
  assertError(t, await post(`{"__proto__":{"clientAge":1},${JSON.stringify(ALP).slice(1)}`), 400)
})

t.test('a body in another type, or none: 415', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: { 'content-type': 'text/plain' }, payload: JSON.stringify(ALP) }), 415, 'text/plain')
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload: '--x--' }), 415)
  assertError(t, await app.inject({ method: 'POST', url: '/marketing' }), 415, 'missing')
})

t.test('a body over BODY_LIMIT: 413', async (t) => {
  const app = await build(t, { BODY_LIMIT: '200' })
  t.equal((await app.inject({ method: 'POST', url: '/marketing', payload: ALP })).statusCode, 200)
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', payload: { ...ALP, clientName: 'x'.repeat(200) } }), 413)
  t.equal((await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: formOf(ALP) })).statusCode, 200, 'a form within the limit')
  const interests = Array.from({ length: 40 }, () => 'x')
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: FORM, payload: formOf({ ...ALP, clientInterestedIn: interests }) }), 413, /too large/)
})

t.test('406 for an Accept without JSON', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ method: 'POST', url: '/marketing', headers: { accept: 'text/html' }, payload: ALP }), 406)
})

t.test('GET /marketing: 405 with Allow: POST (catch-all off)', async (t) => {
  const app = await build(t, { DOCS_CATCH_ALL: 'false' })
  const res = await app.inject({ url: '/marketing' })
  assertError(t, res, 405, 'GET')
  t.equal(res.headers.allow, 'POST')
})

t.test('marketingEmail: the rules of docs/contract.md (The endpoints); the schemas\' examples agree', async (t) => {
  t.same(marketingEmail(ALP), JSON.parse(ALP_EMAIL_JSON))
  t.same(marketingEmail({ ...ALP, clientInterestedIn: ['a', 'b', 'c'] }).body, 'Hi Alp Mestanogullari,\n\nSince you\'ve recently turned 25, have you checked out our latest a, b, c products? Give us a visit!')
  t.same(marketingEmail(ClientInfoSchema.examples[0]), EmailSchema.examples[0])
})
