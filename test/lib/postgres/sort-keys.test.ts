import t from 'tap'
import { jsonIntegerKey, jsonStringKey } from '../../../lib/postgres/sort-keys.js'
import { TRICKY_NAMES } from '../../helpers/repository-contract.js'
import { testPool, testPostgres } from '../../helpers/postgres.js'

t.test('a sort key reads its field from the text: a field name that is not a plain name is refused', async (t) => {
  t.throws(() => jsonStringKey('name\''), { name: 'TypeError', message: 'a sort key\'s field must be a plain name, not "name\'"' })
  t.throws(() => jsonIntegerKey('a b'), TypeError)
  for (const name of ['Name', '1a', '', 'a-b', 'a.b']) t.throws(() => jsonStringKey(name), TypeError, JSON.stringify(name))
  for (const name of ['a', '_', 'registration_date', 'n2', 'a_1_b']) t.doesNotThrow(() => jsonIntegerKey(name), name)
})

/** UTF-16 code-unit order, as JavaScript's `<` (docs/contract.md, The endpoints). */
const byUnits = (a: string | number, b: string | number) => a < b ? -1 : a > b ? 1 : 0

t.test('PostgreSQL orders items by a key as JavaScript orders their fields: integers by value, strings by UTF-16 code unit', async (t) => {
  const pool = testPool(t, await (await testPostgres()).createDatabase())
  /** The items (as create writes them: JSON.stringify's text in a json column) in the key's order, ties by position. */
  const sorted = async <T>(key: string, items: readonly T[]): Promise<T[]> => {
    const { rows } = await pool.query<{ n: string }>(`SELECT n FROM unnest($1::text[]) WITH ORDINALITY AS u(text, n),
      LATERAL (SELECT text::json AS item) AS i ORDER BY ${key}, n`, [items.map((item) => JSON.stringify(item))])
    return rows.map((row) => items[Number(row.n) - 1]!)
  }
  // The field first, last or between others, and others that hold what looks like the field.
  const ages = [0, -1, 5, 36, 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 10, 9, -10]
  const people = ages.map((age, n) => n % 3 === 0
    ? { age, name: '"age":1,', n }
    : n % 3 === 1 ? { name: `"age":-9${n}`, n, age } : { n, age, tag: 'x' })
  t.same(await sorted(jsonIntegerKey('age'), people), people.toSorted((a, b) => byUnits(a.age, b.age)), 'by age')

  const names = TRICKY_NAMES.map((name, n) => n % 2 === 0 ? { name, other: `"name":"${n}"` } : { other: '\u0000"name":"0"', name })
  t.same((await sorted(jsonStringKey('name'), names)).map((item) => item.name), TRICKY_NAMES.toSorted(byUnits), 'by name')
  const plain = ['b', 'a', 'ab', 'B', '', 'é', '~']
  t.same(await sorted(jsonStringKey('name'), plain.map((name) => ({ name }))), plain.toSorted(byUnits).map((name) => ({ name })),
    'names without an escape or a character above U+D7FE')
})
