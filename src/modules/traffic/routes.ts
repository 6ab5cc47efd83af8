import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { AnnotationsService } from './annotations'
import { PAGE_LIMITS, type TrafficService } from './service'

const Direction = t.Union([t.Literal('asc'), t.Literal('desc')])
const QueryBody = (maxLimit: number) =>
  t.Object(
    {
      filter: t.Optional(t.Unknown()),
      offset: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
      limit: t.Optional(t.Integer({ minimum: 1, maximum: maxLimit })),
      sort: t.Optional(
        t.Partial(
          t.Object(
            { created_at: Direction, latency_ms: Direction, cost: Direction, total_tokens: Direction },
            { additionalProperties: false },
          ),
        ),
      ),
      includeBodies: t.Optional(t.Boolean()),
    },
    { additionalProperties: false },
  )

/** Request queries (spec 4.5, `traffic.read`). */
const Rating = t.Union([t.Boolean(), t.Number({ minimum: -1, maximum: 1 })], {
  error: 'rating must be true/false or a number from -1 to 1',
})
const RequestParams = t.Object({ requestId: t.String({ minLength: 1, maxLength: 64 }) })
const SessionParams = t.Object({ sessionId: t.String({ minLength: 1, maxLength: 200 }) })
const annotate = { permission: 'traffic.annotate' as const }

export const trafficRoutes = (authz: Authz, traffic: TrafficService, annotations: AnnotationsService) =>
  new Elysia({ name: 'traffic-routes' })
    .use(authz)
    .post('/v1/request/query', async ({ principal, body }) => ({ data: await traffic.query(principal, body), error: null }), {
      permission: 'traffic.read',
      body: QueryBody(PAGE_LIMITS.request),
      detail: { summary: 'Filter requests (wrapper "request"), newest first by default' },
    })
    .post(
      '/v1/request/query-clickhouse',
      async ({ principal, body }) => ({ data: await traffic.query(principal, body, 'request_response_rmt'), error: null }),
      {
        permission: 'traffic.read',
        body: QueryBody(PAGE_LIMITS.request_response_rmt),
        detail: { summary: 'Filter requests for bulk export (wrapper "request_response_rmt", larger pages)' },
      },
    )
    .post(
      '/v1/request/count/query',
      async ({ principal, body }) => ({ data: await traffic.count(principal, body.filter), error: null }),
      {
        permission: 'traffic.read',
        body: t.Object({ filter: t.Optional(t.Unknown()) }, { additionalProperties: false }),
        detail: { summary: 'Count the requests a filter matches' },
      },
    )
    .post(
      '/v1/request/query-ids',
      async ({ principal, body }) => ({ data: await traffic.byIds(principal, body.requestIds, body.includeBodies), error: null }),
      {
        permission: 'traffic.read',
        body: t.Object(
          {
            requestIds: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 1_000 }),
            includeBodies: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: { summary: 'Requests by id' },
      },
    )
    .post(
      '/v1/request/:requestId/assets/:assetId',
      async ({ principal, params }) => ({ data: await traffic.asset(principal, params.requestId, params.assetId), error: null }),
      {
        permission: 'traffic.read',
        params: t.Object({ requestId: t.String({ maxLength: 64 }), assetId: t.String({ maxLength: 200 }) }),
        detail: { summary: "One of a request's assets (none are stored yet)" },
      },
    )
    .post(
      '/v1/request/:requestId/feedback',
      async ({ principal, params, body }) => ({
        data: await annotations.requestFeedback(principal, params.requestId, body.rating),
        error: null,
      }),
      {
        ...annotate,
        params: RequestParams,
        body: t.Object({ rating: Rating }, { additionalProperties: false }),
        detail: { summary: 'Rate a request' },
      },
    )
    .post(
      '/v1/request/:requestId/score',
      async ({ principal, params, body }) => ({
        data: await annotations.score(principal, params.requestId, body.name, body.value),
        error: null,
      }),
      {
        ...annotate,
        params: RequestParams,
        body: t.Object(
          {
            name: t.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', error: 'name must be 1-64 letters, digits, _, . or -' }),
            value: t.Number(),
          },
          { additionalProperties: false },
        ),
        detail: { summary: 'Score a request under a name (the latest value counts)' },
      },
    )
    .put(
      '/v1/request/:requestId/property',
      async ({ principal, params, body }) => ({
        data: await annotations.setProperty(principal, params.requestId, body.key, body.value),
        error: null,
      }),
      {
        ...annotate,
        params: RequestParams,
        body: t.Object(
          {
            key: t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', error: 'key must be 1-64 letters, digits, - and _' }),
            value: t.String({ maxLength: 1000 }),
          },
          { additionalProperties: false },
        ),
        detail: { summary: "Set one of a request's properties" },
      },
    )
    .post(
      '/v1/session/:sessionId/feedback',
      async ({ principal, params, body }) => ({
        data: await annotations.sessionFeedback(principal, params.sessionId, body.rating),
        error: null,
      }),
      {
        ...annotate,
        params: SessionParams,
        body: t.Object({ rating: Rating }, { additionalProperties: false }),
        detail: { summary: 'Rate a session' },
      },
    )
    .post(
      '/v1/session/:sessionId/tag',
      async ({ principal, params, body }) => ({
        data: await annotations.tagSession(principal, params.sessionId, body.tag),
        error: null,
      }),
      {
        ...annotate,
        params: SessionParams,
        body: t.Object({ tag: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        detail: { summary: 'Tag a session' },
      },
    )
