import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { WindowBody } from '../../query/model'
import type { GroupedViews } from './grouped'
import { METRICS } from './metrics'
import {
  CacheSavingsResult,
  Group,
  GroupedBody,
  KeysOverTime,
  metricSchema,
  PropertyAggregationBody,
  PropertyParams,
  QuantilesResult,
  ScoresResult,
  UsersOverview,
  VerdictsBody,
  VerdictsResult,
} from './model'
import type { AnalyticsService } from './service'

const read = { catalogued: true as const }

/** `/v1/metrics/*` and the dashboard (spec 4.6 `traffic.read`): the metric table's routes, plus the computed ones. */
export const analyticsRoutes = (authz: Authz, analytics: AnalyticsService, grouped: GroupedViews) => {
  const routes = new Elysia({ name: 'analytics-routes' })
    .use(authz)
    .post(
      '/v1/metrics/quantiles',
      async ({ principal, body }) => ({ data: await analytics.quantiles(principal, body), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(QuantilesResult),
        detail: { summary: 'p50, p90, p95 and p99 of latency and time to first token' },
      },
    )
    .post(
      '/v1/metrics/cacheSavings',
      async ({ principal, body }) => ({ data: await analytics.cacheSavings(principal, body), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(CacheSavingsResult),
        detail: { summary: 'What prompt-cache reads saved, in USD, at list prices' },
      },
    )
    .post(
      '/v1/metrics/propertyAggregation',
      async ({ principal, body }) => ({
        data: await grouped.byProperty(principal, body.property, body, 'requests'),
        error: null,
      }),
      {
        ...read,
        body: PropertyAggregationBody,
        response: Ok(t.Array(Group)),
        detail: { summary: 'Requests, cost, tokens, errors and latency per value of one property, busiest first' },
      },
    )
    .post(
      '/v1/dashboard/scores/query',
      async ({ principal, body }) => ({ data: await analytics.scores(principal, body), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(ScoresResult),
        detail: { summary: "Scores of the window's requests, by name: count, average, lowest, highest" },
      },
    )
    .post(
      '/v1/dashboard/verdicts',
      async ({ principal, body }) => ({ data: await analytics.verdicts(principal, body), error: null }),
      {
        ...read,
        body: VerdictsBody,
        response: Ok(VerdictsResult),
        detail: { summary: 'Pass and fail per score name against a threshold (0.5 by default)' },
      },
    )
  // Elysia registers in place; the metric table decides which routes exist and what they answer.
  for (const [name, spec] of Object.entries(METRICS)) {
    routes.post(
      `/v1/metrics/${name}`,
      async ({ principal, body }) => ({ data: await analytics.metric(principal, name, body), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(metricSchema(spec)),
        detail: {
          summary: `${name} (${spec.shape}${spec.overTime ? ' over time' : ''}): ${Object.keys(spec.measures).join(', ')}`,
        },
      },
    )
  }
  return routes
}

/** Traffic grouped by a key (spec 4.6 `traffic.read`): spend, providers, sessions, users, properties. */
export const groupedRoutes = (authz: Authz, views: GroupedViews) =>
  new Elysia({ name: 'grouped-routes' })
    .use(authz)
    .post('/v1/spend/by', async ({ principal, body }) => ({ data: await views.spendBy(principal, body), error: null }), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Spend grouped by model, provider, user, api_key, path or property:<name>' },
    })
    .post('/v1/providers', async ({ principal, body }) => ({ data: await views.providers(principal, body), error: null }), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Traffic by provider' },
    })
    .post('/v1/session/query', async ({ principal, body }) => ({ data: await views.sessions(principal, body), error: null }), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Sessions (Gw-Session-Id), most recent first' },
    })
    .post('/v1/user/query', async ({ principal, body }) => ({ data: await views.users(principal, body), error: null }), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Users (Gw-User-Id), costliest first (Users feature)' },
    })
    .post('/v1/user/metrics/query', async ({ principal, body }) => ({ data: await views.users(principal, body), error: null }), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: "Each user's requests, cost, tokens, errors and latency (Users feature)" },
    })
    .post(
      '/v1/user/metrics-overview/query',
      async ({ principal, body }) => ({ data: await views.usersOverview(principal, body), error: null }),
      {
        ...read,
        body: GroupedBody,
        response: Ok(UsersOverview),
        detail: { summary: 'How many users, and what one sends and costs on average (Users feature)' },
      },
    )
    .post(
      '/v1/property/query',
      async ({ principal, body }) => ({ data: await views.propertyKeys(principal, body), error: null }),
      {
        ...read,
        body: GroupedBody,
        response: Ok(t.Array(t.String())),
        detail: { summary: 'The property keys seen, without hidden ones' },
      },
    )
    .post(
      '/v1/property/properties/over-time',
      async ({ principal, body }) => ({ data: await views.propertyKeysOverTime(principal, body), error: null }),
      {
        ...read,
        body: WindowBody,
        response: Ok(KeysOverTime),
        detail: { summary: 'Per time bucket, how many requests carried each property key (hidden keys left out)' },
      },
    )
    .post(
      '/v1/property/:propertyKey/search',
      async ({ principal, params, body }) => ({
        data: await views.byProperty(principal, params.propertyKey, body, 'requests'),
        error: null,
      }),
      {
        ...read,
        params: PropertyParams,
        body: GroupedBody,
        response: Ok(t.Array(Group)),
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
        ...read,
        params: PropertyParams,
        body: GroupedBody,
        response: Ok(t.Array(Group)),
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
        ...read,
        params: PropertyParams,
        body: GroupedBody,
        response: Ok(t.Array(Group)),
        detail: { summary: "A property's values, busiest first" },
      },
    )
