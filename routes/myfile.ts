import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { FileContentSchema, MISSING_FILE_TEXT, MissingFileResponse } from '../schemas/file-content.js'
import { errorResponses } from '../schemas/common.js'

/** Errors that mean "there is no such file to read": missing, a directory, or FILES_DIR not a directory. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'EISDIR'])

/**
 * GET /myfile.txt: the text of `myfile.txt` in FILES_DIR, read on every request. Absent, the fixed
 * text 404 of the spec. Present but unreadable (permissions, a symlink loop…) is the server's
 * fault: a 500, logged, its cause hidden from the client.
 */
const myfile: FastifyPluginAsyncTypebox = async (fastify) => {
  const file = path.join(fastify.config.FILES_DIR, 'myfile.txt')

  fastify.get('/myfile.txt', {
    schema: {
      summary: 'The text of myfile.txt',
      description: `Reads \`myfile.txt\` in the directory FILES_DIR on every request. Absent (or a directory) → 404 \`text/plain\` \`${MISSING_FILE_TEXT}\``,
      produces: ['application/json'],
      response: {
        200: FileContentSchema,
        404: MissingFileResponse,
        ...errorResponses(406, 500)
      }
    }
  }, async (_request, reply) => {
    try {
      // Invalid UTF-8 becomes U+FFFD: the content is the file's text, as well as it can be read.
      return { content: await readFile(file, 'utf8') }
    } catch (err) {
      if (!ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) throw err
      return reply.code(404).type('text/plain; charset=utf-8').send(MISSING_FILE_TEXT)
    }
  })
}

export default myfile
