import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import ts from 'typescript'
import { projectRoot } from '../../lib/project-root.js'

// What a user does (docs/client.md): copy client/ into a TypeScript project of their own, strict,
// perhaps for a browser, with openapi-fetch installed and nothing else. The copy is compiled there,
// with the docs' examples and the fixtures of test/client/strict/ (lines marked @ts-expect-error
// must be errors: TypeScript reports one that is not).

const FIXTURES = path.join(projectRoot, 'test', 'client', 'strict')

/** A user's strict project (and stricter: indexes, optional properties, type imports), with the DOM and no Node types (`Buffer` is an error), as a browser build has. */
const BROWSER_PROJECT: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  verbatimModuleSyntax: true,
  target: ts.ScriptTarget.ES2023,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: [],
  noEmit: true
}

/** The module settings of a project run by Node, and of one built by a bundler (Vite, esbuild...). */
const MODULES: Record<string, ts.CompilerOptions> = {
  NodeNext: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  Bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }
}

/** The TypeScript blocks of docs/client.md. */
function docsExamples (): string[] {
  const text = fs.readFileSync(path.join(projectRoot, 'docs', 'client.md'), 'utf8')
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string)
}

/**
 * A user's project in a temporary directory: client/ copied as it is, openapi-fetch installed
 * (linked), the docs' examples at the top (they import `./client/index.js`) and the fixtures where
 * they are in this repository (they import `../../../client/index.js`).
 */
function userProject (t: Test): { root: string, files: string[] } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'client-user-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.cpSync(path.join(projectRoot, 'client'), path.join(root, 'client'), { recursive: true })
  fs.mkdirSync(path.join(root, 'node_modules'))
  fs.symlinkSync(path.join(projectRoot, 'node_modules', 'openapi-fetch'), path.join(root, 'node_modules', 'openapi-fetch'), 'dir')
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ type: 'module', dependencies: { 'openapi-fetch': '*' } }))
  const files = fs.readdirSync(path.join(root, 'client')).filter((name) => name.endsWith('.ts')).map((name) => path.join(root, 'client', name))
  docsExamples().forEach((example, index) => {
    const file = path.join(root, `docs-example-${index}.ts`)
    fs.writeFileSync(file, example)
    files.push(file)
  })
  const fixtures = path.join(root, 'test', 'client', 'strict')
  fs.cpSync(FIXTURES, fixtures, { recursive: true })
  for (const name of fs.readdirSync(fixtures)) files.push(path.join(fixtures, name))
  return { root, files }
}

/**
 * The files parsed so far, shared by the programs of this file: parsing TypeScript's lib files
 * (the DOM's alone is 1.5 MB) is most of a program's time. A file is the same to two programs that
 * read it with the same language version and module format.
 */
const parsed = new Map<string, ts.SourceFile | undefined>()

/** A compiler host for `options` that takes what it can from `parsed`. */
function sharingHost (options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options)
  const parse = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, version, onError, create) => {
    const { languageVersion, impliedNodeFormat } = typeof version === 'object' ? version : { languageVersion: version, impliedNodeFormat: undefined }
    const key = `${languageVersion}:${impliedNodeFormat}:${fileName}`
    if (!parsed.has(key)) parsed.set(key, parse(fileName, version, onError, create))
    return parsed.get(key)
  }
  return host
}

/** The diagnostics of a program, one line each: `file:line: TS<code> message`. */
function diagnostics (root: string, files: string[], options: ts.CompilerOptions): string[] {
  return ts.getPreEmitDiagnostics(ts.createProgram(files, options, sharingHost(options))).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')
    if (diagnostic.file === undefined) return `TS${diagnostic.code} ${message}`
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
    return `${path.relative(root, diagnostic.file.fileName)}:${line + 1}: TS${diagnostic.code} ${message}`
  })
}

t.test('client/ copied into a strict browser project compiles, with the docs\' examples, and the expected errors are errors', async (t) => {
  const { root, files } = userProject(t)
  t.ok(docsExamples().length > 0, 'docs/client.md has examples')
  const expected = fs.readdirSync(FIXTURES).map((name) => fs.readFileSync(path.join(FIXTURES, name), 'utf8').match(/@ts-expect-error/g)?.length ?? 0)
  t.ok(expected.every((count) => count > 0), 'each fixture expects errors')
  for (const [name, modules] of Object.entries(MODULES)) {
    t.same(diagnostics(root, files, { ...BROWSER_PROJECT, ...modules }), [], `0 errors (${name} modules)`)
  }
})

t.test('the project is strict and has no Node: a Buffer, a missing null check, a @ts-expect-error without error fail it', async (t) => {
  const { root } = userProject(t)
  const probe = path.join(root, 'probe.ts')
  fs.writeFileSync(probe, [
    'export const bytes = Buffer.from(\'x\')',
    'export function first (list: string[] | undefined) { return list.length }',
    '// @ts-expect-error',
    'export const fine = 1'
  ].join('\n'))
  t.same(diagnostics(root, [probe], { ...BROWSER_PROJECT, ...MODULES.NodeNext }).map((line) => line.replace(/^(\S+ TS\d+) .*$/s, '$1')), [
    'probe.ts:1: TS2591', // Cannot find name 'Buffer'
    'probe.ts:2: TS18048', // 'list' is possibly 'undefined'
    'probe.ts:3: TS2578' // Unused '@ts-expect-error' directive
  ])
})

t.test('what a user copies imports nothing outside client/ but openapi-fetch, and needs no generator', async (t) => {
  const dir = path.join(projectRoot, 'client')
  for (const name of fs.readdirSync(dir).filter((file) => file.endsWith('.ts'))) {
    const { importedFiles, referencedFiles, typeReferenceDirectives } = ts.preProcessFile(fs.readFileSync(path.join(dir, name), 'utf8'), true, true)
    const outside = importedFiles.map((file) => file.fileName)
      .filter((specifier) => specifier !== 'openapi-fetch' && !(specifier.startsWith('./') && !specifier.includes('/', 2)))
    t.same([...outside, ...referencedFiles, ...typeReferenceDirectives], [], `client/${name}`)
  }
})
