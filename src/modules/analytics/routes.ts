import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { GroupedViews } from './grouped'
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
    .post(
      '/v1/dashboard/scores/query',
      async ({ principal, body }) => ({ data: await analytics.scores(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: MetricsBody,
        detail: { summary: "Scores of the window's requests, by name: count, average, lowest, highest" },
      },
    )
    .post(
      '/v1/dashboard/verdicts',
      async ({ principal, body }) => ({ data: await analytics.verdicts(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: t.Composite([MetricsBody, t.Object({ threshold: t.Optional(t.Number()) })], { additionalProperties: false }),
        detail: { summary: 'Pass and fail per score name against a threshold (0.5 by default)' },
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

const GroupedBody = t.Object(
  {
    filter: t.Optional(t.Unknown()),
    timeFilter: t.Optional(
      t.Object({ start: t.Optional(t.String()), end: t.Optional(t.String()) }, { additionalProperties: false }),
    ),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: 1_000 })),
    offset: t.Optional(t.Integer({ minimum: 0 })),
    groupBy: t.Optional(t.String({ maxLength: 80 })),
    search: t.Optional(t.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
)
const PropertyParams = t.Object({ propertyKey: t.String({ maxLength: 64 }) })

/** Traffic grouped by a key (spec 4.6 `traffic.read`): spend, providers, sessions, users, properties. */
export const groupedRoutes = (authz: Authz, views: GroupedViews) =>
  new Elysia({ name: 'grouped-routes' })
    .use(authz)
    .post('/v1/spend/by', async ({ principal, body }) => ({ data: await views.spendBy(principal, body), error: null }), {
      permission: 'traffic.read',
      body: GroupedBody,
      detail: { summary: 'Spend grouped by model, provider, user, api_key, path or property:<name>' },
    })
    .post('/v1/providers', async ({ principal, body }) => ({ data: await views.providers(principal, body), error: null }), {
      permission: 'traffic.read',
      body: GroupedBody,
      detail: { summary: 'Traffic by provider' },
    })
    .post('/v1/session/query', async ({ principal, body }) => ({ data: await views.sessions(principal, body), error: null }), {
      permission: 'traffic.read',
      body: GroupedBody,
      detail: { summary: 'Sessions (Gw-Session-Id), most recent first' },
    })
    .post('/v1/user/query', async ({ principal, body }) => ({ data: await views.users(principal, body), error: null }), {
      permission: 'traffic.read',
      body: GroupedBody,
      detail: { summary: 'Users (Gw-User-Id), costliest first (Users feature)' },
    })
    .post('/v1/user/metrics/query', async ({ principal, body }) => ({ data: await views.users(principal, body), error: null }), {
      permission: 'traffic.read',
      body: GroupedBody,
      detail: { summary: "Each user's requests, cost, tokens, errors and latency (Users feature)" },
    })
    .post(
      '/v1/user/metrics-overview/query',
      async ({ principal, body }) => ({ data: await views.usersOverview(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: GroupedBody,
        detail: { summary: 'How many users, and what one sends and costs on average (Users feature)' },
      },
    )
    .post(
      '/v1/property/query',
      async ({ principal, body }) => ({ data: await views.propertyKeys(principal, body), error: null }),
      {
        permission: 'traffic.read',
        body: GroupedBody,
        detail: { summary: 'The property keys seen, without hidden ones' },
      },
    )
    .post(
      '/v1/property/:propertyKey/search',
      async ({ principal, params, body }) => ({
        data: await views.byProperty(principal, params.propertyKey, body, 'requests'),
        error: null,
      }),
      {
        permission: 'traffic.read',
        params: PropertyParams,
        body: GroupedBody,
        detail: { summary: "A property's values containing `search`" },
      },
    )
    .post(
      '/v1/property/:propertyKey/top-costs/query',
      async ({ principal, params, body }) => ({
        data: await views.byProperty(principal, params.propertyKey, body, 'cost'),
        error: null,
      }),
      {
        permission: 'traffic.read',
        params: PropertyParams,
        body: GroupedBody,
        detail: { summary: "A property's values, costliest first" },
      },
    )
    .post(
      '/v1/property/:propertyKey/top-requests/query',
      async ({ principal, params, body }) => ({
        data: await views.byProperty(principal, params.propertyKey, body, 'requests'),
        error: null,
      }),
      {
        permission: 'traffic.read',
        params: PropertyParams,
        body: GroupedBody,
        detail: { summary: "A property's values, busiest first" },
      },
    )
