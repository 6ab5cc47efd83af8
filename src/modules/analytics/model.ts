import type { TSchema } from '@sinclair/typebox'
import { type PageSize, Paging } from '../../http/schema'
import { Maybe, SeriesPoint, windowBodyWith } from '../../query/model'
import { t } from '../../util/typebox'
import type { MetricSpec } from './metrics'

/** What a metric of the table answers, derived from its spec so the document says what the code does. */
export function metricSchema(spec: MetricSpec): TSchema {
  const measures = Object.fromEntries(
    Object.entries(spec.measures).map(([name, m]) => [name, m.empty === null ? Maybe(t.Number()) : t.Number()]),
  )
  if (spec.shape === 'scalar') return t.Object(measures)
  if (spec.shape === 'series') return t.Array(SeriesPoint(measures))
  if (!spec.overTime) return t.Array(t.Object({ key: Maybe(t.String()), ...measures }))
  return t.Array(SeriesPoint({ values: t.Record(t.String(), t.Object(measures)) }))
}

const Quantiles = t.Object({ p50: Maybe(t.Number()), p90: Maybe(t.Number()), p95: Maybe(t.Number()), p99: Maybe(t.Number()) })
export const QuantilesResult = t.Object({ latencyMs: Quantiles, timeToFirstTokenMs: Quantiles })

export const CacheSavingsResult = t.Object({
  savings: t.Number({ description: "USD: both caches' savings together" }),
  cacheReadTokens: t.Number(),
  promptCacheSavings: t.Number({
    description: "USD: the providers' prompt-cache reads at the cache price instead of the input price",
  }),
  responseCacheHits: t.Number({ description: "Calls answered from gw's response cache" }),
  responseCacheSavings: t.Number({ description: 'USD: what those answers cost when they were first made' }),
})

export const ScoresResult = t.Array(
  t.Object({ name: t.String(), count: t.Number(), average: t.Number(), min: t.Number(), max: t.Number() }),
)

export const VerdictsBody = windowBodyWith({
  threshold: t.Optional(t.Number({ description: 'a request passes when its score reaches it; 0.5 by default' })),
})
export type VerdictsInput = typeof VerdictsBody.static
export const VerdictsResult = t.Array(
  t.Object({
    name: t.String(),
    threshold: t.Number(),
    passed: t.Number(),
    failed: t.Number(),
    passRate: Maybe(t.Number()),
  }),
)

export const GROUP_PAGE: PageSize = { maxLimit: 1_000, defaultLimit: 100 }
const { limit, offset } = Paging(GROUP_PAGE)

/** The body of the grouped views: the window, a page, and the route's own choices. */
export const GroupedBody = windowBodyWith({
  limit,
  offset,
  groupBy: t.Optional(
    t.String({ maxLength: 80, description: 'spend/by: model, provider, user, api_key, path or property:<name>' }),
  ),
  search: t.Optional(t.String({ maxLength: 200, description: "property search: a substring of the property's values" })),
})
export type GroupedInput = typeof GroupedBody.static

export const PropertyAggregationBody = windowBodyWith({
  property: t.String({ maxLength: 64, description: 'the property whose values the requests are grouped by' }),
  limit,
  offset,
})

export const PropertyParams = t.Object({ propertyKey: t.String({ maxLength: 64 }) })

/** One group of a grouped view. */
export const Group = t.Object({
  key: Maybe(t.String()),
  requests: t.Number(),
  cost: t.Number({ description: 'USD' }),
  tokens: t.Number(),
  errors: t.Number(),
  averageLatencyMs: Maybe(t.Number()),
  firstAt: t.String({ format: 'date-time' }),
  lastAt: t.String({ format: 'date-time' }),
})

export const UsersOverview = t.Object({
  users: t.Number(),
  requestsPerUser: Maybe(t.Number()),
  costPerUser: Maybe(t.Number({ description: 'USD' })),
})

export const PropertyKeys = t.Array(t.String({ description: 'a property key, lower-cased' }))

export const KeysOverTime = t.Array(SeriesPoint({ values: t.Record(t.String(), t.Number()) }))
