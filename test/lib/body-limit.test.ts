import fc from 'fast-check'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { BODY_SLACK, bodyLimitOf, carriesBody, longestForm, longestJson, type BoundedSchema } from '../../lib/body-limit.js'
import { ClientInfoSchema } from '../../schemas/marketing.js'
import { ProductSchema } from '../../schemas/product.js'
import { UserSchema } from '../../schemas/user.js'
import { SEED } from '../helpers/property-runs.js'

/** JSON with every character of every string and key escaped (`\u0061`): the longest way to write it. */
function escapedJson (value: unknown): string {
  if (typeof value === 'string') return `"${Array.from({ length: value.length }, (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`
  if (Array.isArray(value)) return `[${value.map(escapedJson).join(',')}]`
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([key, field]) => `${escapedJson(key)}:${escapedJson(field)}`).join(',')}}`
  return JSON.stringify(value)
}

/** A form with every byte of every name and value percent-encoded, a pair per list element. */
function encodedForm (value: Record<string, unknown>): string {
  const encode = (text: string) => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')
  return Object.entries(value).flatMap(([key, field]) => [field].flat().map((item) => `${encode(key)}=${encode(String(item))}`)).join('&')
}

/** A character of the longest encoding: outside the BMP (a surrogate pair in JSON, four bytes of UTF-8). */
const WIDEST = '😀'

t.test('the longest JSON: every string at its maxLength, each character escaped as a surrogate pair', async (t) => {
  const user = { name: WIDEST.repeat(256), age: Number.MIN_SAFE_INTEGER, email: WIDEST.repeat(254), registration_date: WIDEST.repeat(10) }
  t.equal(longestJson(UserSchema), escapedJson(user).length, 'a user: exactly the longest one')
  t.equal(longestJson(Type.Object({ n: Type.Number() })), '{"\\u006e":-2.2250738585072014e-308}'.length)
  t.equal(longestJson(Type.Array(Type.Boolean(), { maxItems: 3 })), '[false,false,false]'.length)
  t.equal(longestJson(Type.Union([Type.Literal('hi'), Type.Null()])), escapedJson('hi').length)
  t.equal(longestJson(Type.Array(Type.Null(), { maxItems: 0 })), 2, 'an empty list: []')
  t.equal(longestJson(Type.Object({})), 2, 'an empty object: {}')
  t.equal(longestJson(Type.Null()), 'null'.length)
  t.equal(longestJson(Type.Integer({ minimum: -5, maximum: 100 })), '100'.length, 'the longer bound')
  t.equal(longestJson(Type.Literal(12345)), '12345'.length, 'a constant that is no string: its JSON')
  t.equal(longestJson({ type: 'string', enum: ['ab', 'abcd', 'a'] }), escapedJson('abcd').length, 'the longest of an enum, not its type\'s bound')
  t.equal(longestJson({ enum: [true, 'x', null] }), escapedJson('x').length, 'of constants of any type')
})

t.test('a schema that leaves a string, a list or an integer unbounded has no longest body', async (t) => {
  t.equal(longestJson(Type.Object({ text: Type.String() })), Infinity)
  t.equal(longestJson(Type.Array(Type.Integer({ minimum: 0, maximum: 9 }))), Infinity)
  t.equal(longestJson(Type.Integer({ minimum: 0 })), Infinity)
  t.equal(longestJson(Type.Integer({ maximum: 9 })), Infinity)
  t.equal(longestJson(Type.Any() as BoundedSchema), Infinity)
  t.equal(bodyLimitOf(Type.Object({ text: Type.String() })), Infinity)
  t.equal(longestForm(Type.Object({ tags: Type.Array(Type.String({ maxLength: 1 })) })), Infinity)
})

t.test('the longest form: a pair a field, a pair a list element, every byte percent-encoded', async (t) => {
  const client = { clientName: WIDEST.repeat(256), clientEmail: WIDEST.repeat(254), clientAge: Number.MIN_SAFE_INTEGER, clientInterestedIn: Array(32).fill(WIDEST.repeat(64)) }
  t.equal(longestForm(ClientInfoSchema), encodedForm(client).length, 'a client: exactly the longest one')
  t.equal(longestForm(Type.Object({ on: Type.Boolean() })), encodedForm({ on: false }).length)
  t.ok(longestForm(ClientInfoSchema) > longestJson(ClientInfoSchema), 'a form repeats the key of each list element')
})

t.test('a route\'s limit: the longest body of the types it takes, with room to spare, in KiB', async (t) => {
  t.equal(bodyLimitOf(UserSchema), 8 * 1024)
  t.equal(bodyLimitOf(ProductSchema), 5 * 1024)
  t.equal(bodyLimitOf(ClientInfoSchema), 32 * 1024, 'JSON only')
  t.equal(bodyLimitOf(ClientInfoSchema, ['application/json', 'application/x-www-form-urlencoded']), 33 * 1024, 'and forms')
  for (const schema of [UserSchema, ProductSchema, ClientInfoSchema]) {
    const limit = bodyLimitOf(schema)
    t.ok(limit >= longestJson(schema) + BODY_SLACK && limit < longestJson(schema) + BODY_SLACK + 1024, `${String(schema.$id)}: ${limit}`)
  }
})

t.test('no valid user or client, written however long, is over the longest body', async (t) => {
  const text = (max: number) => fc.string({ unit: 'binary', maxLength: max })
  const user = fc.record({ name: text(256), age: fc.maxSafeInteger(), email: text(254), registration_date: fc.constant('1683-03-01') })
  fc.assert(fc.property(user, (value) => escapedJson(value).length <= longestJson(UserSchema)), { seed: SEED })
  const client = fc.record({ clientName: text(256), clientEmail: text(254), clientAge: fc.maxSafeInteger(), clientInterestedIn: fc.array(text(64), { maxLength: 32 }) })
  fc.assert(fc.property(client, (value) => escapedJson(value).length <= longestJson(ClientInfoSchema) && encodedForm(value).length <= longestForm(ClientInfoSchema)), { seed: SEED })
})

t.test('a request carries a body when it says so: a Transfer-Encoding, or a Content-Length other than 0', async (t) => {
  t.equal(carriesBody({}), false)
  t.equal(carriesBody({ 'content-length': '0' }), false)
  t.equal(carriesBody({ 'content-length': '00' }), false)
  t.equal(carriesBody({ 'content-length': '1' }), true)
  t.equal(carriesBody({ 'transfer-encoding': 'chunked' }), true)
  t.equal(carriesBody({ 'transfer-encoding': 'chunked', 'content-length': '0' }), true)
})
