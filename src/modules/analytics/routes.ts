import { Elysia, t } from 'elysia'
import { answer } from '../../http/answer'
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
  PropertyKeys,
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
    .post('/v1/metrics/quantiles', ({ principal, body }) => answer(analytics.quantiles(principal, body)), {
      ...read,
      body: WindowBody,
      response: Ok(QuantilesResult),
      detail: { summary: 'p50, p90, p95 and p99 of latency and time to first token' },
    })
    .post('/v1/metrics/cacheSavings', ({ principal, body }) => answer(analytics.cacheSavings(principal, body)), {
      ...read,
      body: WindowBody,
      response: Ok(CacheSavingsResult),
      detail: { summary: "What caching saved, in USD: providers' prompt-cache reads, and gw's response-cache hits" },
    })
    .post(
      '/v1/metrics/propertyAggregation',
      ({ principal, body }) => answer(grouped.byProperty(principal, body.property, body, 'requests')),
      {
        ...read,
        body: PropertyAggregationBody,
        response: Ok(t.Array(Group)),
        detail: { summary: 'Requests, cost, tokens, errors and latency per value of one property, busiest first' },
      },
    )
    .post('/v1/dashboard/scores/query', ({ principal, body }) => answer(analytics.scores(principal, body)), {
      ...read,
      body: WindowBody,
      response: Ok(ScoresResult),
      detail: { summary: "Scores of the window's requests, by name: count, average, lowest, highest" },
    })
    .post('/v1/dashboard/verdicts', ({ principal, body }) => answer(analytics.verdicts(principal, body)), {
      ...read,
      body: VerdictsBody,
      response: Ok(VerdictsResult),
      detail: { summary: 'Pass and fail per score name against a threshold (0.5 by default)' },
    })
  // Elysia registers in place; the metric table decides which routes exist and what they answer.
  for (const [name, spec] of Object.entries(METRICS)) {
    routes.post(`/v1/metrics/${name}`, ({ principal, body }) => answer(analytics.metric(principal, name, body)), {
      ...read,
      body: WindowBody,
      response: Ok(metricSchema(spec)),
      detail: {
        summary: `${name} (${spec.shape}${spec.overTime ? ' over time' : ''}): ${Object.keys(spec.measures).join(', ')}`,
      },
    })
  }
  return routes
}

/** Traffic grouped by a key (spec 4.6 `traffic.read`): spend, providers, sessions, users, properties. */
export const groupedRoutes = (authz: Authz, views: GroupedViews) =>
  new Elysia({ name: 'grouped-routes' })
    .use(authz)
    .post('/v1/spend/by', ({ principal, body }) => answer(views.spendBy(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Spend grouped by model, provider, user, api_key, path or property:<name>' },
    })
    .post('/v1/providers', ({ principal, body }) => answer(views.providers(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Traffic by provider' },
    })
    .post('/v1/session/query', ({ principal, body }) => answer(views.sessions(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Sessions (Gw-Session-Id), most recent first' },
    })
    .post('/v1/user/query', ({ principal, body }) => answer(views.users(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: 'Users (Gw-User-Id), costliest first (Users feature)' },
    })
    .post('/v1/user/metrics/query', ({ principal, body }) => answer(views.users(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(t.Array(Group)),
      detail: { summary: "Each user's requests, cost, tokens, errors and latency (Users feature)" },
    })
    .post('/v1/user/metrics-overview/query', ({ principal, body }) => answer(views.usersOverview(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(UsersOverview),
      detail: { summary: 'How many users, and what one sends and costs on average (Users feature)' },
    })
    .post('/v1/property/query', ({ principal, body }) => answer(views.propertyKeys(principal, body)), {
      ...read,
      body: GroupedBody,
      response: Ok(PropertyKeys),
      detail: { summary: 'The property keys seen, without hidden ones' },
    })
    .post('/v1/property/properties/over-time', ({ principal, body }) => answer(views.propertyKeysOverTime(principal, body)), {
      ...read,
      body: WindowBody,
      response: Ok(KeysOverTime),
      detail: { summary: 'Per time bucket, how many requests carried each property key (hidden keys left out)' },
    })
    .post(
      '/v1/property/:propertyKey/search',
      ({ principal, params, body }) => answer(views.byProperty(principal, params.propertyKey, body, 'requests')),
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
      ({ principal, params, body }) => answer(views.byProperty(principal, params.propertyKey, body, 'cost')),
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
      ({ principal, params, body }) => answer(views.byProperty(principal, params.propertyKey, body, 'requests')),
      {
        ...read,
        params: PropertyParams,
        body: GroupedBody,
        response: Ok(t.Array(Group)),
        detail: { summary: "A property's values, busiest first" },
      },
    )
