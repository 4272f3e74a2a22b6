import type { SortBy, User } from '../../schemas/user.js'

/** The users in the order `sortby` asks for (ascending; a stable sort, so ties keep id order). */
export function sortUsers (users: readonly User[], sortby: SortBy | undefined): User[] {
  if (sortby === 'age') return users.toSorted((a, b) => a.age - b.age)
  if (sortby === 'name') return users.toSorted((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  return [...users]
}

/** text/plain: one line per user, `Isaac Newton, 372, isaac@newton.co.uk, 1683-03-01`. */
export function renderUsersText (users: readonly User[]): string {
  return users.map((user) => `${user.name}, ${user.age}, ${user.email}, ${user.registration_date}\n`).join('')
}

/** application/x-www-form-urlencoded: every user's fields as repeated keys, in field order. */
export function renderUsersForm (users: readonly User[]): string {
  const form = new URLSearchParams()
  for (const user of users) {
    form.append('name', user.name)
    form.append('age', String(user.age))
    form.append('email', user.email)
    form.append('registration_date', user.registration_date)
  }
  return form.toString()
}
