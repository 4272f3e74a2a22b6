import type { Color } from '../schemas/color.js'

/**
 * A large collection for colors.bench.js (through service-with-colors.js): `count` colours drawn
 * from a fixed pseudo-random sequence, so every run serves the same ones. Names are the tutorial's
 * names with a suffix of 0–999, so they repeat (about `count` / 59,000 times each) like the
 * real ones do; hex follows from rgb.
 */
export function syntheticColors (count: number, names: readonly string[]): Color[] {
  const colors: Color[] = new Array(count)
  let state = 0x9e3779b9
  for (let i = 0; i < count; i++) {
    // xorshift32: fast, deterministic, good enough for test data.
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    const bits = state >>> 0
    const r = bits & 0xff
    const g = (bits >>> 8) & 0xff
    const b = (bits >>> 16) & 0xff
    const name = names[(bits >>> 24) % names.length] as string
    colors[i] = {
      name: `${name}${i % 1000}`,
      rgb: [r, g, b],
      hex: `#${((r << 16) | (g << 8) | b).toString(16).padStart(6, '0')}`
    }
  }
  return colors
}
