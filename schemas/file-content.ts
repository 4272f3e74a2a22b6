import { Type, type Static } from '@sinclair/typebox'

/** The full text of a file. */
export const FileContentSchema = Type.Object({
  content: Type.String()
}, { $id: 'FileContent', examples: [{ content: 'Hello\n' }] })

export type FileContent = Static<typeof FileContentSchema>
