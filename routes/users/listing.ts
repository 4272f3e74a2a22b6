import type { ItemEncoding } from '../../lib/collection-list.js'
import type { User } from '../../schemas/user.js'

/** text/plain: one line per user, `Isaac Newton, 372, isaac@newton.co.uk, 1683-03-01`. */
export function userLine (user: User): string {
  return `${user.name}, ${user.age}, ${user.email}, ${user.registration_date}\n`
}

/** application/x-www-form-urlencoded: a user's fields as keys, in field order. */
export function userForm (user: User): string {
  return new URLSearchParams([
    ['name', user.name],
    ['age', String(user.age)],
    ['email', user.email],
    ['registration_date', user.registration_date]
  ]).toString()
}

/** text/plain and the form, an item at a time (lib/collection-list.ts): the lines follow one another, the forms are joined by `&`. */
export const USER_ENCODINGS: Readonly<Record<string, ItemEncoding<User>>> = {
  'text/plain': { separator: '', item: userLine },
  'application/x-www-form-urlencoded': { separator: '&', item: userForm }
}

/** text/plain of a whole list: its lines (the description page's example, and the reference of the tests). */
export function renderUsersText (users: readonly User[]): string {
  return users.map(userLine).join('')
}

/** application/x-www-form-urlencoded of a whole list: every user's fields as repeated keys, in field order. */
export function renderUsersForm (users: readonly User[]): string {
  return users.map(userForm).join('&')
}
