const usd = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 4 })
const count = new Intl.NumberFormat(undefined)
const ms = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 })

export const formatUsd = (value: number): string => usd.format(value)
const usdExact = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 9 })
/** A price to the nano-dollar gw keeps (a tool rate, one call's cost): `$0.000002`, not `$0.00`. */
export const formatUsdExact = (value: number): string => usdExact.format(value)
export const formatCount = (value: number): string => count.format(value)
export const formatMs = (value: number | null): string => (value === null ? '-' : `${ms.format(value)} ms`)
/** A moment in the reader's own time zone and manner; `-` for none. */
export const formatWhen = (iso: string | null): string => (iso === null ? '-' : new Date(iso).toLocaleString())
