import { type AnyColumn, and, eq, type SQL, sql } from 'drizzle-orm'
import type { Principal } from '../../auth/principal'
import { notFound } from '../../errors'
import { priceFor } from '../../money/cost'
import { requestScope, windowScope } from '../../query/filter'
import type { WindowInput } from '../../query/model'
import { bucketName, bucketRanges, bucketSql, bucketsOf, parseWindow, type TimeWindow } from '../../query/time'
import type { Grouping } from '../../store/grouping'
import type { Store } from '../../store/store'
import { METRICS, type MetricSpec } from './metrics'
import type { VerdictsInput } from './model'

type Row = Record<string, unknown>

const numberOf = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))
const QUANTILES = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const

/** Analytics over the request log: the SQL store today, the same answers from ClickHouse later. */
export class AnalyticsService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async metric(principal: Principal, name: string, input: WindowInput) {
    const spec = METRICS[name]
    if (!spec) throw notFound(`metric ${name}`)
    const window = parseWindow(input, this.now())
    if (spec.shape === 'series') return this.series(spec, this.scope(principal, input.filter, spec), window)
    const where = this.where(principal, input.filter, window, spec)
    if (spec.shape === 'scalar') return this.scalar(spec, where)
    return this.breakdown(spec, where, window)
  }

  /** p50, p90, p95 and p99 of latency and of time to first token, by nearest rank. */
  async quantiles(principal: Principal, input: WindowInput) {
    const window = parseWindow(input, this.now())
    const where = this.where(principal, input.filter, window)
    const { requests } = this.store.schema.tables
    const of = async (column: AnyColumn) => {
      const values = await this.store.requests.quantiles(where, column, Object.values(QUANTILES))
      const [p50, p90, p95, p99] = values as [number | null, number | null, number | null, number | null]
      return { p50, p90, p95, p99 }
    }
    return { latencyMs: await of(requests.latencyMs), timeToFirstTokenMs: await of(requests.timeToFirstTokenMs) }
  }

  /** Scores given to the window's requests, by name (`dashboard/scores/query`). */
  async scores(principal: Principal, input: WindowInput) {
    const window = parseWindow(input, this.now())
    const stats = await this.store.org(principal.orgId).annotations.scoreStats(this.where(principal, input.filter, window), 0)
    return stats.map(({ passed: _passed, ...rest }) => rest).sort((a, b) => a.name.localeCompare(b.name))
  }

  /** Pass or fail per score name: a request passes when its score reaches the threshold. */
  async verdicts(principal: Principal, input: VerdictsInput) {
    const window = parseWindow(input, this.now())
    const threshold = input.threshold ?? 0.5
    const stats = await this.store
      .org(principal.orgId)
      .annotations.scoreStats(this.where(principal, input.filter, window), threshold)
    return stats
      .map((s) => ({
        name: s.name,
        threshold,
        passed: s.passed,
        failed: s.count - s.passed,
        passRate: s.count === 0 ? null : s.passed / s.count,
      }))
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  /**
   * What caching saved: the providers' prompt-cache reads at the model's cache price instead of its
   * input price, and the calls gw's response cache answered, at what they cost when first made.
   */
  async cacheSavings(principal: Principal, input: WindowInput) {
    const window = parseWindow(input, this.now())
    const where = this.where(principal, input.filter, window)
    const { requests } = this.store.schema.tables
    const rows = await this.store.requests.aggregate(
      where,
      { provider: sql`${requests.provider}`, model: sql`${requests.model}` },
      {
        cacheReadTokens: sql`coalesce(sum(${requests.cacheReadTokens}), 0)`,
        hits: sql`sum(case when ${requests.cached} then 1 else 0 end)`,
        savedNano: sql`coalesce(sum(${requests.cacheSavedNano}), 0)`,
      },
    )
    let promptNano = 0
    let responseNano = 0
    let hits = 0
    for (const row of rows) {
      const provider = row.provider === 'anthropic' ? 'anthropic' : row.provider === 'openai' ? 'openai' : undefined
      const price = provider ? priceFor(provider, String(row.model)) : undefined
      if (price?.cacheReadNanoPerToken !== undefined)
        promptNano += numberOf(row.cacheReadTokens) * (price.inputNanoPerToken - price.cacheReadNanoPerToken)
      responseNano += numberOf(row.savedNano)
      hits += numberOf(row.hits)
    }
    return {
      savings: (promptNano + responseNano) / 1e9,
      cacheReadTokens: rows.reduce((n, r) => n + numberOf(r.cacheReadTokens), 0),
      promptCacheSavings: promptNano / 1e9,
      responseCacheHits: hits,
      responseCacheSavings: responseNano / 1e9,
    }
  }

  private where(principal: Principal, filter: unknown, window: TimeWindow, spec?: MetricSpec): SQL {
    return this.narrowed(windowScope(this.store.schema, principal.orgId, filter, window), spec)
  }

  /** Without the time window: a series reads each bucket's own range of it. */
  private scope(principal: Principal, filter: unknown, spec: MetricSpec): SQL {
    return this.narrowed(requestScope(this.store.schema, principal.orgId, filter ?? 'all'), spec)
  }

  private narrowed(scope: SQL, spec: MetricSpec | undefined): SQL {
    return spec?.errorsOnly ? (and(scope, eq(this.store.schema.tables.requests.status, 'error')) as SQL) : scope
  }

  private measuresOf(spec: MetricSpec): Record<string, SQL> {
    const { requests } = this.store.schema.tables
    return Object.fromEntries(Object.entries(spec.measures).map(([name, m]) => [name, m.sql(requests)]))
  }

  /** Stored units into shown ones; a measure without a value shows what its empty set shows. */
  private shown(spec: MetricSpec, row: Row | undefined): Record<string, number | null> {
    return Object.fromEntries(
      Object.entries(spec.measures).map(([name, m]) => {
        const raw = row?.[name]
        return [name, raw === null || raw === undefined ? m.empty : Number(raw) * (m.scale ?? 1)]
      }),
    )
  }

  private async scalar(spec: MetricSpec, where: SQL) {
    const [row] = await this.store.requests.aggregate(where, {}, this.measuresOf(spec))
    return this.shown(spec, row)
  }

  private async series(spec: MetricSpec, scope: SQL, window: TimeWindow) {
    const rows = await this.store.requests.series(
      scope,
      { grouping: bucketSql(this.store.schema, window), ranges: bucketRanges(window) },
      this.measuresOf(spec),
    )
    const byBucket = new Map(rows.map((r) => [numberOf(r.bucket), r]))
    return bucketsOf(window).map((bucket) => ({ time: bucketName(bucket), ...this.shown(spec, byBucket.get(bucket)) }))
  }

  private async breakdown(spec: MetricSpec, where: SQL, window: TimeWindow) {
    const { requests } = this.store.schema.tables
    const key = (spec.key as NonNullable<MetricSpec['key']>)(requests)
    const groups: Record<string, SQL | Grouping> = spec.overTime ? { key, bucket: bucketSql(this.store.schema, window) } : { key }
    const rows = await this.store.requests.aggregate(where, groups, this.measuresOf(spec))
    if (!spec.overTime) return rows.map((r) => ({ key: r.key === null ? null : String(r.key), ...this.shown(spec, r) }))
    const keys = [...new Set(rows.map((r) => String(r.key)))].sort()
    const found = new Map(rows.map((r) => [`${numberOf(r.bucket)}|${String(r.key)}`, r]))
    return bucketsOf(window).map((bucket) => ({
      time: bucketName(bucket),
      values: Object.fromEntries(keys.map((k) => [k, this.shown(spec, found.get(`${bucket}|${k}`))])),
    }))
  }
}
