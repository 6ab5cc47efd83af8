import { resolve } from 'node:path'

/** A gw binary with extra environment, as the A/B benchmarks compare them. */
export interface Variant {
  label: string
  binary: string
  env: Record<string, string>
}

/** `label=binary[,NAME=value...]`; a value may itself hold `=` (BUN_OPTIONS=--cpu-prof-dir=/tmp). */
export function parseVariant(spec: string, reserved: ReadonlySet<string> = new Set()): Variant {
  const [head = '', ...settings] = spec.split(',')
  const split = head.indexOf('=')
  const label = head.slice(0, split)
  if (split <= 0 || split === head.length - 1 || reserved.has(label)) {
    const others = reserved.size > 0 ? ` with a label other than ${[...reserved].join(' or ')}` : ''
    throw new Error(`a variant is label=binary[,NAME=value...]${others}, got "${spec}"`)
  }
  const env: Record<string, string> = {}
  for (const setting of settings) {
    const at = setting.indexOf('=')
    if (at <= 0) throw new Error(`"${setting}" in "${spec}" is not NAME=value`)
    env[setting.slice(0, at)] = setting.slice(at + 1)
  }
  return { label, binary: resolve(head.slice(split + 1)), env }
}
