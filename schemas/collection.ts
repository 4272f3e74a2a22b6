import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { ID_RANGE_PATTERN } from '../lib/range/keyed.js'
import { CollectionFull } from '../lib/error-codes.js'
import { SafeInteger, describedError, documentOnly, withHeaders } from './common.js'

/**
 * The Range request header of a collection's list (docs/contract.md, Pagination by Range): a page by
 * id, `name` being what one item is called, `more` what the route adds. Its pattern, written from the grammar that parses it,
 * is the document's only: a Range it does not match is still refused by the grammar, with the
 * grammar's code and message.
 */
export function idRangeHeader (name: string, more = '') {
  return documentOnly(Type.String({
    description: '`id [<value>][; offset <o>][; limit <l>][; order <asc|desc>]`: a page of the ' + name + 's by id, ' +
      'from the value (inclusive; any integer); defaults: limit 100, offset 0, order asc. Absent: every ' + name + ', 200. ' +
      'A malformed value is a 400; the pattern of the OpenAPI document matches well-formed values only.' + more,
    examples: ['id', 'id; limit 2', 'id 2; limit 1', 'id; order desc; limit 1']
  }), { pattern: ID_RANGE_PATTERN })
}

/**
 * The preferences of `Prefer` a collection's writes act on (RFC 7240). Any other is ignored, as
 * the RFC has it, not refused: the list is the document's only.
 */
export const RETURN_PREFERENCES = ['return=representation', 'return=minimal'] as const

/** A page of a collection (206) and the headers of /colors that come with it (optional: not always sent). */
export function pageSchema<T extends TSchema> (item: T, name: string, examples: unknown[]) {
  return Type.Array(item, {
    description: `A page of the ${name}s, by id`,
    ...(examples.length > 0 ? { examples } : {}),
    headers: Type.Object({
      'Accept-Ranges': Type.String({ description: 'The field a range may be defined on: id.', examples: ['id'] }),
      'Content-Range': Type.Optional(Type.String({
        description: `\`id <first>..<last>\`: the ids of the first and last ${name} returned. Absent on an empty page.`,
        examples: ['id 1..2']
      })),
      'Next-Range': Type.Optional(Type.String({
        description: 'The Range header value of the next page. Absent on an empty page and on the last one (shorter than the limit).',
        examples: ['id 2;limit 2;offset 1;order asc']
      })),
      'Total-Count': SafeInteger({ minimum: 0, description: `How many ${name}s the collection has.`, examples: [2] })
    })
  })
}

const PREFERENCE_APPLIED = Type.Optional(Type.String({ description: 'return=representation or return=minimal, when the request asked for it' }))

/**
 * The schemas of a collection's routes (lib/collection-routes.ts), for an item schema: what one
 * item is called (`user`), the name of its id capture (`userid`), the routes' prefix (`/users`)
 * and the ceiling of items (COLLECTION_MAX_ITEMS).
 */
export function collectionSchemas<T extends TObject> (item: T, name: string, id: string, prefix: string, maxItems: number) {
  const CreatedHeaders = Type.Object({
    Location: Type.String({ description: `The new ${name}'s URL: \`${prefix}/<${id}>\`` }),
    'Preference-Applied': PREFERENCE_APPLIED
  })
  const ReplacedHeaders = Type.Object({ 'Preference-Applied': PREFERENCE_APPLIED })
  const examples = Array.isArray(item.examples) ? [item.examples] : []
  return {
    Params: Type.Object({ [id]: SafeInteger({ description: `The ${name}'s id` }) }),
    Items: Type.Array(item, examples.length > 0 ? { examples } : {}),
    ListHeaders: Type.Object({ Range: Type.Optional(idRangeHeader(name)) }),
    Page: pageSchema(item, name, examples),
    PreferHeaders: Type.Object({
      Prefer: Type.Optional(documentOnly(Type.String({
        description: 'return=representation: answer with the item; return=minimal: without it (RFC 7240). Other preferences are ignored.',
        examples: [...RETURN_PREFERENCES]
      }), { enum: [...RETURN_PREFERENCES] }))
    }),
    Created: Type.Null({ description: `Created: no content; Location is the new ${name}'s URL`, headers: CreatedHeaders }),
    Replaced: Type.Null({ description: 'Replaced: no content', headers: ReplacedHeaders }),
    Deleted: Type.Null({ description: 'Deleted: no content' }),
    WithLocation: withHeaders(item, CreatedHeaders),
    WithPreference: withHeaders(item, ReplacedHeaders),
    // docs/contract.md, Collections: why 409.
    Full: describedError(new CollectionFull(maxItems),
      `Conflict: the collection holds ${maxItems} ${name}s, its most (COLLECTION_MAX_ITEMS); a POST succeeds again once one is deleted, not by waiting`)
  }
}
