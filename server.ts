import module from 'node:module'
import path from 'node:path'

/**
 * The container's entry (`node dist/bundle/server.js`): Node's module compile cache first (Node
 * 22.1 and later), then the service (service.ts). V8 keeps the code it compiled in
 * `.compile-cache/` beside this file, and later starts read it instead of parsing the bundle
 * again; the Docker image fills it when it is built. NODE_COMPILE_CACHE chooses another directory
 * (Node turns the cache on there itself, and this call does nothing), NODE_DISABLE_COMPILE_CACHE=1 turns it off. The service is
 * imported only now: its modules are parsed once the cache is on.
 */
const { enableCompileCache } = module as { enableCompileCache?: (directory: string) => unknown }
enableCompileCache?.(path.join(import.meta.dirname, '.compile-cache'))
await import('./service.js')
