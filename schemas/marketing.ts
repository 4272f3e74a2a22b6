import { Type, type Static } from '@sinclair/typebox'
import { SafeInteger } from './common.js'

/** The sender of every marketing e-mail (docs/contract.md, Sample data). */
export const SENDER_ADDRESS = 'great@company.com'

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
  clientName: Type.String(),
  clientEmail: Type.String(),
  clientAge: SafeInteger(),
  clientInterestedIn: Type.Array(Type.String())
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
