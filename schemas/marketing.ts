import { Type, type Static } from '@sinclair/typebox'
import { BoundedString, EmailAddress, Name, SafeInteger } from './common.js'

/** The sender of every marketing e-mail (docs/contract.md, Sample data). */
export const SENDER_ADDRESS = 'great@company.com'

/** The most interests a client may list, and the longest one, in characters. */
export const INTERESTS_MAX_ITEMS = 32
export const INTEREST_MAX_LENGTH = 64

const ALP = {
  clientName: 'Alp Mestanogullari',
  clientEmail: 'alp@foo.com',
  clientAge: 25,
  clientInterestedIn: ['haskell', 'mathematics']
}

/**
 * The request body of `POST /marketing`, all four fields required. In a form, `clientInterestedIn`
 * is one repeated key per element (none: the empty list) and `clientAge` a decimal integer.
 */
export const ClientInfoSchema = Type.Object({
  clientName: Name(),
  clientEmail: EmailAddress(),
  clientAge: SafeInteger(),
  clientInterestedIn: Type.Array(BoundedString(INTEREST_MAX_LENGTH), {
    maxItems: INTERESTS_MAX_ITEMS,
    description: `At most ${INTERESTS_MAX_ITEMS} interests, each of at most ${INTEREST_MAX_LENGTH} characters.`
  })
}, { $id: 'ClientInfo', examples: [ALP] })

export type ClientInfo = Static<typeof ClientInfoSchema>

/** The e-mail built from a ClientInfo, its fields in the order of the spec's table. */
export const EmailSchema = Type.Object({
  from: Type.String(),
  to: Type.String(),
  subject: Type.String(),
  body: Type.String()
}, {
  $id: 'Email',
  examples: [{
    from: SENDER_ADDRESS,
    to: 'alp@foo.com',
    subject: 'Hey Alp Mestanogullari, we miss you!',
    body: 'Hi Alp Mestanogullari,\n\nSince you\'ve recently turned 25, have you checked out our latest haskell, mathematics products? Give us a visit!'
  }]
})

export type Email = Static<typeof EmailSchema>
