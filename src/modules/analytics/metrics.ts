import { type SQL, sql } from 'drizzle-orm'
import type { Tables } from '../../store/database'

/**
 * The metrics routes as data: each names what it measures, and whether it is one number, a series
 * over time buckets, or a breakdown by a key (optionally also over time). Measures are SQL
 * aggregates over the request log; `scale` turns stored units into shown ones (nano-USD into USD).
 */
export interface Measure {
  sql: (t: Tables['requests']) => SQL
  scale?: number
  /** What an empty set shows: 0 for counts and sums, null for averages (no value is not zero). */
  empty: 0 | null
}

export interface MetricSpec {
  shape: 'scalar' | 'series' | 'breakdown'
  measures: Record<string, Measure>
  /** For breakdowns: what the rows are grouped by. */
  key?: (t: Tables['requests']) => SQL
  /** A breakdown also split by time bucket. */
  overTime?: boolean
  /** Only requests that failed. */
  errorsOnly?: boolean
}

const NANO = 1e-9
const count: Measure = { sql: () => sql`count(*)`, empty: 0 }
const cost: Measure = { sql: (t) => sql`coalesce(sum(${t.costNano}), 0)`, scale: NANO, empty: 0 }
const avg = (pick: (t: Tables['requests']) => unknown): Measure => ({ sql: (t) => sql`avg(${pick(t)})`, empty: null })
const total = (pick: (t: Tables['requests']) => unknown): Measure => ({ sql: (t) => sql`coalesce(sum(${pick(t)}), 0)`, empty: 0 })
const errors: Measure = { sql: (t) => sql`coalesce(sum(case when ${t.status} = 'error' then 1 else 0 end), 0)`, empty: 0 }
const users: Measure = { sql: (t) => sql`count(distinct ${t.userId})`, empty: 0 }
const costPerThousandTokens: Measure = {
  sql: (t) =>
    sql`case when coalesce(sum(${t.totalTokens}), 0) = 0 then null else sum(${t.costNano}) * 1000.0 / sum(${t.totalTokens}) end`,
  scale: NANO,
  empty: null,
}

export const METRICS: Record<string, MetricSpec> = {
  requestCount: { shape: 'scalar', measures: { count } },
  totalRequests: { shape: 'scalar', measures: { count } },
  totalCost: { shape: 'scalar', measures: { cost } },
  averageLatency: { shape: 'scalar', measures: { latencyMs: avg((t) => t.latencyMs) } },
  averageTimeToFirstToken: { shape: 'scalar', measures: { timeToFirstTokenMs: avg((t) => t.timeToFirstTokenMs) } },
  averageTokensPerRequest: { shape: 'scalar', measures: { tokens: avg((t) => t.totalTokens) } },
  activeUsers: { shape: 'scalar', measures: { users } },
  costEfficiency: { shape: 'scalar', measures: { costPerThousandTokens, cost, tokens: total((t) => t.totalTokens) } },
  requestOverTime: { shape: 'series', measures: { count } },
  costOverTime: { shape: 'series', measures: { cost } },
  spendTrend: { shape: 'series', measures: { cost, count } },
  latencyOverTime: { shape: 'series', measures: { latencyMs: avg((t) => t.latencyMs) } },
  timeToFirstToken: { shape: 'series', measures: { timeToFirstTokenMs: avg((t) => t.timeToFirstTokenMs) } },
  tokensOverTime: {
    shape: 'series',
    measures: {
      promptTokens: total((t) => t.promptTokens),
      completionTokens: total((t) => t.completionTokens),
      totalTokens: total((t) => t.totalTokens),
    },
  },
  costPerTokenOverTime: { shape: 'series', measures: { costPerThousandTokens } },
  errorOverTime: { shape: 'series', measures: { errors, count } },
  usersOverTime: { shape: 'series', measures: { users } },
  models: { shape: 'breakdown', key: (t) => sql`${t.model}`, measures: { count, cost, tokens: total((t) => t.totalTokens) } },
  modelsOverTime: { shape: 'breakdown', key: (t) => sql`${t.model}`, overTime: true, measures: { count } },
  requestStatusOverTime: { shape: 'breakdown', key: (t) => sql`${t.status}`, overTime: true, measures: { count } },
  errorBreakdown: { shape: 'breakdown', key: (t) => sql`${t.httpStatus}`, errorsOnly: true, measures: { count } },
  /** By the country the trusted proxy reported (GW_COUNTRY_HEADER); `null` gathers the unknown. */
  country: { shape: 'breakdown', key: (t) => sql`${t.country}`, measures: { count, cost } },
}
