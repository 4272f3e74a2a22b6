import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'client/dist/**', 'coverage/**', '.tap/**', 'node_modules/**', 'client/schema.ts', '.stryker-tmp/**', 'reports/**']
  }),
  // A file past this many lines (blank and comment lines too) holds more than one concern: split it.
  { rules: { 'max-lines': ['error', 450] } }
]
