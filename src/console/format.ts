const usd = (options: Intl.NumberFormatOptions) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', ...options })
/** From a cent up: cents, and the sub-cent digits a sum of small calls has, up to four decimals ($0.0113). */
const cents = usd({ maximumFractionDigits: 4 })
/** Below a cent: its first two significant digits, so a call of $0.00002 does not read as free. */
const fractions = usd({ maximumSignificantDigits: 2 })
/** To the nano-dollar gw keeps. */
const whole = usd({ maximumFractionDigits: 9 })
const count = new Intl.NumberFormat(undefined)
const ms = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 })

/**
 * USD, as the console shows money everywhere: `$1,234.50` and `$0.0113` from a cent up, `$0.0034` and
 * `$0.00002` below it, `$0.00` only for nothing. `exact` keeps every digit: for a price someone set (a
 * tool rate of $0.00125 is not $0.0013) and for a chart's axis, whose round steps need all of theirs.
 */
export function formatUsd(value: number, { exact = false }: { exact?: boolean } = {}): string {
  // -0 (a refund's sum, a difference) would read as -$0.00.
  const amount = value === 0 ? 0 : value
  if (exact) return whole.format(amount)
  return amount !== 0 && Math.abs(amount) < 0.01 ? fractions.format(amount) : cents.format(amount)
}
export const formatCount = (value: number): string => count.format(value)
export const formatMs = (value: number | null): string => (value === null ? '-' : `${ms.format(value)} ms`)
const msSteps = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 })
/** A chart's axis in ms: a step under a millisecond keeps its digits (0.5 ms, not a second "1 ms"). */
export const formatMsAxis = (value: number): string => `${msSteps.format(value)} ms`
/** A moment in the reader's own time zone and manner; `-` for none. */
export const formatWhen = (iso: string | null): string => (iso === null ? '-' : new Date(iso).toLocaleString())
