// The rules of the house (plugins/README.md): who may import whom. `npm run imports` checks the
// sources with them; test/imports.test.ts checks them on the sources and on a tree that breaks each.

// The files of the repository: the rules speak of them, not of packages or Node's modules.
const local = ['local']

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'route-imports-schemas-lib-and-its-group',
      severity: 'error',
      comment: 'A route file imports only schemas/, lib/ and its own endpoint group\'s folder (a file of routes/ is a group of its own): what it needs of a plugin, it gets through Fastify.',
      from: { path: '^routes/([^/]+)' },
      to: { dependencyTypes: local, pathNot: ['^(lib|schemas)/', '^routes/$1(/|$)'] }
    },
    {
      name: 'plugin-folder-imports-lib-schemas-and-itself',
      severity: 'error',
      comment: 'A plugin folder (plugins/collections/) is one plugin: its files import lib/, schemas/ and one another, never another plugin\'s file; what they use of another plugin, they use through Fastify (a decorator) and declare in `dependencies`.',
      from: { path: '^plugins/(?!edge/|external/)([^/]+)/' },
      to: { dependencyTypes: local, pathNot: ['^(lib|schemas)/', '^plugins/$1/'] }
    },
    {
      name: 'plugin-file-imports-lib-and-schemas',
      severity: 'error',
      comment: 'A file of plugins/, plugins/edge/ or plugins/external/ is a plugin of its own (autoload registers each): it imports lib/ and schemas/, never another plugin\'s file; what it uses of another plugin, it uses through Fastify (a decorator) and declares in `dependencies`.',
      from: { path: '^(plugins/(?:(?:edge|external)/.+|[^/]+))$' },
      to: { dependencyTypes: local, pathNot: ['^(lib|schemas)/', '^$1$'] }
    },
    {
      name: 'lib-imports-no-plugin-and-no-route',
      severity: 'error',
      comment: 'lib/ holds the plain modules, outside autoload, tested without a server where they can be: it imports no plugin and no route.',
      from: { path: '^lib/' },
      to: { path: '^(plugins|routes)/' }
    },
    {
      name: 'schemas-import-schemas-and-lib',
      severity: 'error',
      comment: 'schemas/ describes the API: its files import only schemas/ and lib/.',
      from: { path: '^schemas/' },
      to: { dependencyTypes: local, pathNot: '^(schemas|lib)/' }
    },
    {
      name: 'stores-import-nothing-of-each-other',
      severity: 'error',
      comment: 'A store (lib/memory/, lib/postgres/) implements the contracts of lib/repository.ts and lib/auth-failures.ts from files of its own, and imports nothing of the other store.',
      from: { path: '^lib/(memory|postgres)/' },
      to: { path: '^lib/(memory|postgres)/', pathNot: '^lib/$1/' }
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle anywhere: a cycle makes the load order, and what a module sees of another while it loads, depend on which file is imported first.',
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    // Generated and built files, and the tree test/imports.test.ts breaks the rules with.
    exclude: { path: ['^test/fixtures/', '(^|/)dist/'] },
    doNotFollow: { path: 'node_modules' },
    // `import type` counts: the rules are about the sources, not what survives compilation.
    tsPreCompilationDeps: true,
    // Resolved as tsc resolves them: `./x.js` names the source `./x.ts`.
    tsConfig: { fileName: 'tsconfig.json' }
  }
}
