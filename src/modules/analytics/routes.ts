import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { METRICS } from './metrics'
import type { AnalyticsService } from './service'
import { INCREMENTS } from './time'

/** The common body of the metrics routes (issue 7): a filter, a time window, the caller's zone, a bucket size. */
const MetricsBody = t.Object(
  {
    filter: t.Optional(t.Unknown()),
    timeFilter: t.Optional(
      t.Object({ start: t.Optional(t.String()), end: t.Optional(t.String()) }, { additionalProperties: false }),
    ),
    timeZoneDifference: t.Optional(
      t.Integer({ minimum: -840, maximum: 840, description: 'minutes to add to UTC for local time' }),
    ),
    dbIncrement: t.Optional(t.Union(INCREMENTS.map((i) => t.Literal(i)))),
  },
  { additionalProperties: false },
)

/** `/v1/metrics/*` (spec 4.6 `traffic.read`): one route per metric of the table, plus the computed ones. */
export const analyticsRoutes = (authz: Authz, analytics: AnalyticsService) => {
  const routes = new Elysia({ name: 'analytics-routes' })
    .use(authz)
    .post(
      '/v1/metrics/quantiles',
      async ({ principal, body }) => ({ data: await analytics.quantiles(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: MetricsBody,
        detail: { summary: 'p50, p90, p95 and p99 of latency and time to first token' },
      },
    )
    .post(
      '/v1/metrics/cacheSavings',
      async ({ principal, body }) => ({ data: await analytics.cacheSavings(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: MetricsBody,
        detail: { summary: 'What prompt-cache reads saved, in USD, at list prices' },
      },
    )
  // Elysia registers in place; the metric table decides which routes exist.
  for (const [name, spec] of Object.entries(METRICS)) {
    routes.post(
      `/v1/metrics/${name}`,
      async ({ principal, body }) => ({ data: await analytics.metric(principal, name, body), error: null }),
      {
        permission: 'traffic.read',
        body: MetricsBody,
        detail: {
          summary: `${name} (${spec.shape}${spec.overTime ? ' over time' : ''}): ${Object.keys(spec.measures).join(', ')}`,
        },
      },
    )
  }
  return routes
}
