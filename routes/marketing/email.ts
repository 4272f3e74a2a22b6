import { SENDER_ADDRESS, type ClientInfo, type Email } from '../../schemas/marketing.js'

/** The marketing e-mail for a client (docs/contract.md, The endpoints): no interests give `latest  products`. */
export function marketingEmail (client: ClientInfo): Email {
  return {
    from: SENDER_ADDRESS,
    to: client.clientEmail,
    subject: `Hey ${client.clientName}, we miss you!`,
    body: `Hi ${client.clientName},\n\nSince you've recently turned ${client.clientAge}, ` +
      `have you checked out our latest ${client.clientInterestedIn.join(', ')} products? Give us a visit!`
  }
}
