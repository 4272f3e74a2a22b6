// Kubernetes resource quantities (`250m`, `128Mi`, `1.5G`, `2e3`), as the API reads them, for the
// tests of deploy/kubernetes/ that compare a request or a limit with a figure.

/** The multiplier of each suffix: binary (Ki…Ei), decimal SI (n…E). */
const SUFFIXES: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18
}

/**
 * A quantity in its base unit (cores for CPU, bytes for memory and storage); 0 when unset, as the
 * API's zero value. Anything that is not the API's quantity grammar throws.
 */
export function quantity (value: string | number | undefined): number {
  if (value === undefined) return 0
  if (typeof value === 'number') return value
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(value)
  if (match === null) throw new Error(`${JSON.stringify(value)} is not a Kubernetes quantity`)
  const [, number, exponent, suffix = ''] = match
  return Number(number) * (exponent === undefined ? SUFFIXES[suffix]! : 10 ** Number(exponent.slice(1)))
}
