import t from 'tap'
import { jsonIntegerKey, jsonStringKey } from '../../../lib/postgres/sort-keys.js'

t.test('a sort key reads its field from the text: a field name that is not a plain name is refused', async (t) => {
  t.throws(() => jsonStringKey('name\''), TypeError)
  t.throws(() => jsonIntegerKey('a b'), TypeError)
})
