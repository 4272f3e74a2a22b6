import { Type, type TObject } from '@sinclair/typebox'
import { SafeInteger, withHeaders } from './common.js'

const PREFERENCE_APPLIED = Type.Optional(Type.String({ description: 'return=representation or return=minimal, when the request asked for it' }))

/**
 * The schemas of a collection's routes (lib/collection-routes.ts), for an item schema: what one
 * item is called (`user`), the name of its id capture (`userid`) and the routes' prefix (`/users`).
 */
export function collectionSchemas<T extends TObject> (item: T, name: string, id: string, prefix: string) {
  const CreatedHeaders = Type.Object({
    Location: Type.String({ description: `The new ${name}'s URL: \`${prefix}/<${id}>\`` }),
    'Preference-Applied': PREFERENCE_APPLIED
  })
  const ReplacedHeaders = Type.Object({ 'Preference-Applied': PREFERENCE_APPLIED })
  return {
    Params: Type.Object({ [id]: SafeInteger({ description: `The ${name}'s id` }) }),
    Items: Type.Array(item, Array.isArray(item.examples) ? { examples: [item.examples] } : {}),
    PreferHeaders: Type.Object({
      Prefer: Type.Optional(Type.String({ description: 'return=representation: answer with the item (RFC 7240)', examples: ['return=representation', 'return=minimal'] }))
    }),
    Created: Type.Null({ description: `Created: no content; Location is the new ${name}'s URL`, headers: CreatedHeaders }),
    Replaced: Type.Null({ description: 'Replaced: no content', headers: ReplacedHeaders }),
    Deleted: Type.Null({ description: 'Deleted: no content' }),
    WithLocation: withHeaders(item, CreatedHeaders),
    WithPreference: withHeaders(item, ReplacedHeaders)
  }
}
