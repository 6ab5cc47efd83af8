import { Counter, Histogram, type Registry } from 'prom-client'

/**
 * Per-call counts kept in plain maps and handed to prom-client only at scrape. prom-client checks and
 * hashes a call's label object on every `inc` and `observe`, about a microsecond each, and a settled
 * call makes ten of them; here a call joins its label values into one key and adds to a map entry.
 */

type LabelValues<L extends string> = Partial<Record<L, string>>
/** What a histogram answers the registry: prom-client's own shape. */
type Exposed<L extends string> = Awaited<ReturnType<Histogram<L>['get']>>
type Value<L extends string> = Exposed<L>['values'][number] & { sharedLabels?: LabelValues<L> }

/** Between label values in a key: no label value gw gives (providers, priced models, path families, statuses) holds it. */
const SEP = '\u0001'

/** The key of a label set: its values in the order of the metric's label names. */
export const key = (...values: readonly (string | number)[]): string => values.join(SEP)

interface Config<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
  registers: Registry[]
}

function labelsOf<L extends string>(names: readonly L[], joined: string): LabelValues<L> {
  const values = joined.split(SEP)
  const labels: LabelValues<L> = {}
  names.forEach((name, i) => {
    labels[name] = values[i] ?? ''
  })
  return labels
}

/** A counter whose increments wait in a map until a scrape folds them into prom-client's. */
export class FoldedCounter<L extends string> {
  private readonly pending = new Map<string, number>()

  constructor(config: Config<L>) {
    const pending = this.pending
    new Counter<L>({
      ...config,
      labelNames: [...config.labelNames],
      collect() {
        for (const [joined, by] of pending) this.inc(labelsOf(config.labelNames, joined), by)
        pending.clear()
      },
    })
  }

  /** Adds to the label set whose values `joined` holds (see `key`). */
  add(joined: string, by = 1): void {
    this.pending.set(joined, (this.pending.get(joined) ?? 0) + by)
  }
}

interface Series<L extends string> {
  labels: LabelValues<L>
  /** Observations in each bucket (not cumulative); the last is those above every bound. */
  counts: Float64Array
  sum: number
  count: number
}

/**
 * A histogram kept by gw and exposed through prom-client's registry: prom-client has no way to add
 * many observations at once, so this one answers the scrape itself, in prom-client's own shape.
 */
export class FoldedHistogram<L extends string> extends Histogram<L> {
  private readonly series = new Map<string, Series<L>>()
  private readonly bounds: readonly number[]
  private readonly names: readonly L[]
  private readonly metricName: string
  private readonly metricHelp: string

  constructor(config: Config<L> & { buckets: readonly number[] }) {
    super({ ...config, labelNames: [...config.labelNames], buckets: [...config.buckets] })
    this.bounds = config.buckets
    this.names = config.labelNames
    this.metricName = config.name
    this.metricHelp = config.help
  }

  /** One observation of the label set whose values `joined` holds (see `key`). */
  add(joined: string, value: number): void {
    let series = this.series.get(joined)
    if (!series) {
      series = { labels: labelsOf(this.names, joined), counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }
      this.series.set(joined, series)
    }
    let bucket = 0
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++
    series.counts[bucket] = (series.counts[bucket] ?? 0) + 1
    series.sum += value
    series.count += 1
  }

  override reset(): void {
    super.reset()
    this.series?.clear()
  }

  /** What the registry writes: per series its cumulative buckets, `+Inf`, sum and count, as prom-client's own do. */
  async getForPromString(): Promise<Exposed<L>> {
    return this.exposed(false)
  }

  override async get(): Promise<Exposed<L>> {
    return this.exposed(true)
  }

  /** `le` in the labels and the series' own labels apart (for the text), or all in the labels (for JSON). */
  private exposed(merged: boolean): Exposed<L> {
    const values: Value<L>[] = []
    const bucketName = `${this.metricName}_bucket`
    for (const { labels, counts, sum, count } of this.series.values()) {
      const value = (le: number | string | undefined, v: number, metricName: string): Value<L> => {
        const own: Record<string, string | number> = le === undefined ? {} : { le }
        return merged
          ? { labels: { ...own, ...labels } as LabelValues<L>, value: v, metricName }
          : { labels: own as LabelValues<L>, sharedLabels: labels, value: v, metricName }
      }
      let below = 0
      this.bounds.forEach((le, i) => {
        below += counts[i] ?? 0
        values.push(value(le, below, bucketName))
      })
      values.push(value('+Inf', count, bucketName))
      values.push(value(undefined, sum, `${this.metricName}_sum`))
      values.push(value(undefined, count, `${this.metricName}_count`))
    }
    return {
      name: this.metricName,
      help: this.metricHelp,
      // prom-client's types declare a numeric enum here; the registry writes the string it is given.
      type: 'histogram' as unknown as Exposed<L>['type'],
      values,
      aggregator: 'sum',
      collect: () => undefined,
    }
  }
}
