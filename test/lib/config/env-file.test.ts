import path from 'node:path'
import t from 'tap'
import { loadEnvFile } from '../../../lib/config/env-file.js'

t.test('loadEnvFile: .env of the working directory when there is one; what is set already wins', async (t) => {
  const dir = t.testdir({
    with: { '.env': 'SERVANT_TEST_FROM_FILE=file\nSERVANT_TEST_SET=file\n' },
    without: {},
    broken: { '.env': {} }
  })
  const cwd = process.cwd()
  t.teardown(() => {
    process.chdir(cwd)
    delete process.env.SERVANT_TEST_FROM_FILE
    delete process.env.SERVANT_TEST_SET
  })
  process.env.SERVANT_TEST_SET = 'environment'
  process.chdir(path.join(dir, 'with'))
  t.same(loadEnvFile(), ['SERVANT_TEST_FROM_FILE', 'SERVANT_TEST_SET'], 'the names the file sets')
  t.equal(process.env.SERVANT_TEST_FROM_FILE, 'file')
  t.equal(process.env.SERVANT_TEST_SET, 'environment')
  process.chdir(path.join(dir, 'without'))
  t.same(loadEnvFile(), [], 'no .env: nothing to do')
  process.chdir(path.join(dir, 'broken'))
  t.throws(() => loadEnvFile(), 'a .env that cannot be read (here a directory) is an error, not ignored')
})
