/** A field name as the key expressions below write it into SQL. */
const FIELD = /^[a-z_][a-z0-9_]*$/

/**
 * The sort keys below read a field from an item's text without parsing it: PostgreSQL's json
 * operators refuse a whole item that holds `\u0000` or a lone surrogate anywhere (22P05, 22P02),
 * both valid JSON that the API accepts. The text is JSON.stringify's (create and replace): compact,
 * and `"<field>":` occurs once, where the field is (inside a string, a quote is escaped), provided
 * the item is a flat object of the schema's keys that always has the field, as a user is.
 */
function afterKey (field: string, opening: string): string {
  if (!FIELD.test(field)) throw new TypeError(`a sort key's field must be a plain name, not ${JSON.stringify(field)}`)
  const key = `"${field}":${opening}`
  return `substr(item::text, strpos(item::text, '${key}') + ${key.length})`
}

/** A sort key on an integer field: its digits, as a bigint (a safe integer fits). */
export function jsonIntegerKey (field: string): string {
  return `rtrim(split_part(${afterKey(field, '')}, ',', 1), '}')::bigint`
}

/**
 * A sort key on a string field whose order is UTF-16 code-unit order, exactly, as JavaScript's `<`
 * (docs/contract.md, The endpoints), under COLLATE "C" (UTF-8 bytes: code-point order). The two
 * differ only where code units are outside U+0002–U+D7FE and U+E000–U+FFFF: a character above
 * U+FFFF is two surrogates (D800–DFFF) in UTF-16, below U+E000, but above U+FFFF in code points; a
 * lone surrogate and U+0000 have no text form at all. So each code unit u becomes:
 * - u itself, for U+0002–U+D7FE and U+E000–U+FFFF (most strings are all of these, and used as they are);
 * - U+0001 U+0001 for U+0000, U+0001 U+0002 for U+0001;
 * - U+D7FF, then the character u − U+D7FE (1 to 0x801), for U+D7FF–U+DFFF.
 * Each unit's code is ordered as the units are, and no code is the start of another, so strings
 * compare as their units do. The value's escapes (`\"`, `\n`, `\u0000`, `\ud800`) are read as the
 * code units they stand for.
 */
export function jsonStringKey (field: string): string {
  const rest = afterKey(field, '"')
  // Up to the first quote: the whole value unless it holds an escape, which the slow path reads.
  const plain = `split_part(${rest}, '"', 1)`
  const value = `substring(${rest} FROM '^((?:[^"\\\\]|\\\\.)*)"')`
  const unit = `CASE WHEN u = 0 THEN chr(1) || chr(1) WHEN u = 1 THEN chr(1) || chr(2)
    WHEN u < 55295 OR u >= 57344 THEN chr(u) ELSE chr(55295) || chr(u - 55294) END`
  const codePoint = `CASE WHEN m.t[1] ~ '^\\\\u' THEN ('x' || substr(m.t[1], 3))::bit(16)::int
    WHEN m.t[1] ~ '^\\\\' THEN ascii(translate(substr(m.t[1], 2), 'bfnrt', chr(8) || chr(12) || chr(10) || chr(13) || chr(9)))
    ELSE ascii(m.t[1]) END`
  const units = `(SELECT coalesce(string_agg(${unit}, '' ORDER BY m.n, s.half), '')
    FROM regexp_matches(${value}, '\\\\u[0-9a-fA-F]{4}|\\\\.|.', 'g') WITH ORDINALITY AS m(t, n),
    LATERAL (SELECT ${codePoint} AS c) AS p,
    LATERAL unnest(CASE WHEN p.c < 65536 THEN ARRAY[p.c] ELSE ARRAY[55296 + ((p.c - 65536) >> 10), 56320 + ((p.c - 65536) & 1023)] END) WITH ORDINALITY AS s(u, half))`
  return `(CASE WHEN ${plain} !~ '[\\\\\\uD7FF\\U00010000-\\U0010FFFF]' THEN ${plain} ELSE ${units} END) COLLATE "C"`
}
