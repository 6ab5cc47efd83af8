/** Order statistics by nearest rank: the value at or above the q-th fraction of the samples. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[index] as number
}

export interface Summary {
  count: number
  min: number
  p50: number
  p99: number
  max: number
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort()
  return {
    count: sorted.length,
    min: quantile(sorted, 0),
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: quantile(sorted, 1),
  }
}
