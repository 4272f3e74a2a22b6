import type { components } from './schema.js'

type ClientInfo = components['schemas']['ClientInfo']

/**
 * A ClientInfo as the form POST /marketing reads: `clientAge` in decimal, one `clientInterestedIn`
 * key per interest (none: no key, the empty list).
 */
export function marketingForm ({ clientName, clientEmail, clientAge, clientInterestedIn }: ClientInfo): URLSearchParams {
  const form = new URLSearchParams({ clientName, clientEmail, clientAge: String(clientAge) })
  for (const interest of clientInterestedIn) form.append('clientInterestedIn', interest)
  return form
}

/** The fields of a form, each key's values in their order: `a=1&b=2&a=3` → `{ a: ['1', '3'], b: ['2'] }`. */
export function formFields (text: string): Partial<Record<string, string[]>> {
  const fields: Partial<Record<string, string[]>> = {}
  for (const [key, value] of new URLSearchParams(text)) (fields[key] ??= []).push(value)
  return fields
}
