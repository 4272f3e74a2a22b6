import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { projectRoot } from '../lib/project-root.js'

// The README is what a newcomer reads first: the two commands, what the service does, what each
// dependency is for; the rest is in docs/, which it links to (issue 44: at most 150 lines).

const read = (file: string) => fs.readFileSync(path.join(projectRoot, file), 'utf8')
const readme = read('README.md')
const pkg = JSON.parse(read('package.json')) as Record<'dependencies' | 'devDependencies' | 'optionalDependencies', Record<string, string>>

/** The text of a `## heading` section of a Markdown file, to the next `## `. */
function section (markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start === -1) return ''
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end === -1 ? undefined : end)
}

/** The names a text gives in backticks (`@types/*` covering every @types package). */
function named (text: string): (name: string) => boolean {
  const names = new Set([...text.matchAll(/`([^`\s]+)`/g)].map((match) => match[1] as string))
  return (name) => names.has(name) || (name.startsWith('@types/') && names.has('@types/*'))
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').replace(/\s/g, '-')

t.test('at most 150 lines, and it starts with the two commands', async (t) => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0)
  t.ok(lines <= 150, `${lines} lines`)
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  t.same(firstBlock.split('\n').filter((line) => line !== '').map((line) => line.split('#')[0]!.trim()), ['npm ci && npm start', 'npm ci && npm test'])
})

t.test('every dependency is said what it is for: the runtime ones in the README, the others in docs/development.md', async (t) => {
  const inReadme = named(section(readme, 'Dependencies'))
  t.same(Object.keys(pkg.dependencies).filter((name) => !inReadme(name)), [], 'README.md, "Dependencies"')
  const inDevelopment = named(section(read('docs/development.md'), 'Dependencies'))
  const others = [...Object.keys(pkg.devDependencies), ...Object.keys(pkg.optionalDependencies)]
  t.same(others.filter((name) => !inDevelopment(name)), [], 'docs/development.md, "Dependencies"')
  t.ok(section(readme, 'Dependencies').includes('](docs/development.md#dependencies)'), 'the README links to it')
})

t.test('the README\'s links lead to files that exist, and to headings they have', async (t) => {
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string).filter((link) => !/^[a-z]+:/.test(link))
  t.ok(links.length > 10, `${links.length} links`)
  for (const link of links) {
    const [file = '', fragment] = link.split('#')
    t.ok(fs.existsSync(path.join(projectRoot, file)), `${link}: the file`)
    if (fragment === undefined) continue
    const headings = [...read(file).matchAll(/^#+ (.+)$/gm)].map((match) => anchor(match[1] as string))
    t.ok(headings.includes(fragment), `${link}: the heading`)
  }
  t.equal(anchor('Probes, shutdown and overload'), 'probes-shutdown-and-overload')
  t.equal(anchor('Node 24 and `npm ci`'), 'node-24-and-npm-ci')
})
