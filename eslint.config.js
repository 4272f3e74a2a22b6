import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['dist/**', 'coverage/**', '.tap/**', 'node_modules/**', 'client/schema.ts', '.stryker-tmp/**', 'reports/**']
})
