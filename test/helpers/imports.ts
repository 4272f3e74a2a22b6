import fs from 'node:fs'
import path from 'node:path'

/** Which files of the repository each file imports (relative imports only; paths from the root, with `/`). */
export type ImportGraph = Record<string, string[]>

const STATIC_IMPORT = /^(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.[^'"]+)['"]/gm
const SIDE_EFFECT_IMPORT = /^import\s*['"](\.[^'"]+)['"]/gm
const DYNAMIC_IMPORT = /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g

/** The file a relative specifier names: `./x.js` is the TypeScript source `./x.ts` when there is one. */
function resolve (root: string, from: string, specifier: string): string {
  const target = path.join(path.dirname(from), specifier)
  const candidates = specifier.endsWith('.js') ? [target.replace(/\.js$/, '.ts'), target] : [target, `${target}.ts`, path.join(target, 'index.ts')]
  return candidates.find((file) => fs.existsSync(path.join(root, file)) && fs.statSync(path.join(root, file)).isFile()) ?? target
}

/** The relative imports of a source text, in order: static, side-effect and dynamic (`import('./x.js')`). */
export function importsOf (text: string): string[] {
  return [STATIC_IMPORT, SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT].flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1] as string))
}

/** The import graph of the TypeScript sources under `dirs` (and the top-level `*.ts`) of `root`. */
export function importGraph (root: string, dirs: readonly string[]): ImportGraph {
  const files = [
    ...fs.readdirSync(root).filter((name) => name.endsWith('.ts')),
    ...dirs.flatMap((dir) => fs.readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => path.join(dir, name)))
  ].map((file) => file.split(path.sep).join('/'))
  return Object.fromEntries(files.sort().map((file) => [file, importsOf(fs.readFileSync(path.join(root, file), 'utf8'))
    .map((specifier) => resolve(root, file, specifier).split(path.sep).join('/'))]))
}

const under = (file: string, dir: string) => file.startsWith(`${dir}/`)

/** The folders of plugins/ whose files are each a plugin (autoload registers every file), not the parts of one. */
export const PLUGIN_FOLDERS: readonly string[] = ['edge', 'external']

/** The files a plugin file may import besides lib/ and schemas/: its own folder's (one file of plugins/, plugins/edge/ or plugins/external/ is a folder of its own). */
function pluginUnit (file: string): (target: string) => boolean {
  const [, folder, rest] = file.split('/')
  if (rest === undefined || PLUGIN_FOLDERS.includes(folder!)) return (target) => target === file
  return (target) => under(target, `plugins/${folder}`)
}

/** The files a route file may import besides lib/ and schemas/: its endpoint group's folder (a file of routes/ is a group of its own). */
function routeGroup (file: string): (target: string) => boolean {
  const [, group, rest] = file.split('/')
  if (rest === undefined) return (target) => target === file
  return (target) => under(target, `routes/${group}`)
}

/** The folders of lib/ that each hold one store, implementing the contracts of lib/ (lib/repository.ts, lib/auth-failures.ts). */
export const STORE_FOLDERS: readonly string[] = ['lib/memory', 'lib/postgres']

/** Whether a file of lib/ may import `target`: no plugin, no route, and from a store's folder no other store's. */
function libAllows (file: string, target: string): boolean {
  if (under(target, 'plugins') || under(target, 'routes')) return false
  const store = STORE_FOLDERS.find((folder) => under(file, folder))
  return store === undefined || !STORE_FOLDERS.some((other) => other !== store && under(target, other))
}

/**
 * The imports that break the rules of plugins/README.md: routes import only schemas/, lib/ and
 * their own group's files; a plugin imports only lib/, schemas/ and its own folder, never another
 * plugin's file; lib/ and schemas/ import no plugin and no route (schemas/ only lib/ and schemas/);
 * a store (lib/memory/, lib/postgres/) implements the contracts of lib/, never from another store.
 */
export function ruleViolations (graph: ImportGraph): string[] {
  const broken: string[] = []
  for (const [file, targets] of Object.entries(graph)) {
    const shared = (target: string) => under(target, 'lib') || under(target, 'schemas')
    const allowed = under(file, 'routes')
      ? (target: string) => shared(target) || routeGroup(file)(target)
      : under(file, 'plugins')
        ? (target: string) => shared(target) || pluginUnit(file)(target)
        : under(file, 'lib')
          ? (target: string) => libAllows(file, target)
          : under(file, 'schemas')
            ? shared
            : () => true
    for (const target of targets) if (!allowed(target)) broken.push(`${file} imports ${target}`)
  }
  return broken
}

/** Every import cycle (Tarjan's strongly connected components of more than one file, or a file importing itself). */
export function importCycles (graph: ImportGraph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  let counter = 0
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const target of graph[file] ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || (graph[file] ?? []).includes(file)) cycles.push(component.sort())
    }
  }
  for (const file of Object.keys(graph)) if (!index.has(file)) visit(file)
  return cycles
}
