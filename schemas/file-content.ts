import { Type, type Static } from '@sinclair/typebox'

/** The full text of a file. */
export const FileContentSchema = Type.Object({
  content: Type.String()
}, { $id: 'FileContent', examples: [{ content: 'Hello\n' }] })

export type FileContent = Static<typeof FileContentSchema>

/** The body of `GET /myfile.txt` when the file is not there. */
export const MISSING_FILE_TEXT = 'myfile.txt just isn\'t there, please leave this server alone.'

/** `GET /myfile.txt`'s 404: plain text, declared per media type. */
export const MissingFileResponse = {
  description: 'The file is not there.',
  content: { 'text/plain': { schema: Type.String({ examples: [MISSING_FILE_TEXT] }) } }
}
