// The test processes' TypeScript loader: tsx, told to put each file's source in the source maps it
// writes. tap measures coverage through the inspector, not NODE_V8_COVERAGE, so tsx cannot tell
// that coverage is on, and leaves the sources out; the coverage report then finds no TypeScript
// to count (one empty line a file, which reads as 100 %). tsx includes them when it sees
// NODE_V8_COVERAGE as it loads: set for that moment only, because Node reads it at a process's
// start, and the processes the tests spawn must not write coverage files of their own.
// (package.json's tap.node-arg loads this file in place of tsx.)
const unset = process.env.NODE_V8_COVERAGE === undefined
if (unset) process.env.NODE_V8_COVERAGE = '.tap/coverage'
await import('tsx')
if (unset) delete process.env.NODE_V8_COVERAGE
