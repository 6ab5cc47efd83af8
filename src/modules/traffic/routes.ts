import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { ErrorEnvelope, Ok } from '../../http/schema'
import type { AnnotationsService } from './annotations'
import type { GatewayTest } from './gateway-test'
import {
  CountBody,
  GatewayTestBody,
  GatewayTestResult,
  IdsBody,
  PAGE_LIMITS,
  Page,
  PropertyBody,
  QueryBody,
  RatingBody,
  RequestParams,
  RequestView,
  ScoreBody,
  SessionParams,
  TagBody,
} from './model'
import type { TrafficService } from './service'

const read = { catalogued: true as const }
const annotate = { catalogued: true as const }

/** Request queries (spec 4.5, `traffic.read`), annotations (`traffic.annotate`) and the gateway self-test. */
export const trafficRoutes = (authz: Authz, traffic: TrafficService, annotations: AnnotationsService, test: GatewayTest) =>
  new Elysia({ name: 'traffic-routes' })
    .use(authz)
    .post('/v1/request/query', async ({ principal, body }) => ({ data: await traffic.query(principal, body), error: null }), {
      ...read,
      body: QueryBody(PAGE_LIMITS.request),
      response: Ok(Page),
      detail: { summary: 'Filter requests (wrapper "request"), newest first by default' },
    })
    .post(
      '/v1/request/query-clickhouse',
      async ({ principal, body }) => ({ data: await traffic.query(principal, body, 'request_response_rmt'), error: null }),
      {
        ...read,
        body: QueryBody(PAGE_LIMITS.request_response_rmt),
        response: Ok(Page),
        detail: { summary: 'Filter requests for bulk export (wrapper "request_response_rmt", larger pages, cursor paging)' },
      },
    )
    .post(
      '/v1/request/count/query',
      async ({ principal, body }) => ({ data: await traffic.count(principal, body.filter), error: null }),
      {
        ...read,
        body: CountBody,
        response: Ok(t.Object({ count: t.Number() })),
        detail: { summary: 'Count the requests a filter matches' },
      },
    )
    .post(
      '/v1/request/query-ids',
      async ({ principal, body }) => ({ data: await traffic.byIds(principal, body.requestIds, body.includeBodies), error: null }),
      {
        ...read,
        body: IdsBody,
        response: Ok(t.Object({ requests: t.Array(RequestView) })),
        detail: { summary: 'Requests by id' },
      },
    )
    .post(
      '/v1/request/:requestId/assets/:assetId',
      async ({ principal, params }) => ({ data: await traffic.asset(principal, params.requestId, params.assetId), error: null }),
      {
        ...read,
        params: t.Object({ requestId: t.String({ maxLength: 64 }), assetId: t.String({ maxLength: 200 }) }),
        response: { 404: ErrorEnvelope },
        detail: { summary: "One of a request's assets (none are stored yet: always 404)" },
      },
    )
    .post('/v1/test/gateway-request', async ({ principal, body }) => ({ data: await test.run(principal, body), error: null }), {
      ...read,
      body: GatewayTestBody,
      response: Ok(GatewayTestResult),
      detail: { summary: "One small chat call through the organisation's own gateway path, and its outcome" },
    })
    .post(
      '/v1/request/:requestId/feedback',
      async ({ principal, params, body }) => ({
        data: await annotations.requestFeedback(principal, params.requestId, body.rating),
        error: null,
      }),
      {
        ...annotate,
        params: RequestParams,
        body: RatingBody,
        response: Ok(t.Object({ requestId: t.String(), rating: t.Number() })),
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
        body: ScoreBody,
        response: Ok(t.Object({ requestId: t.String(), scores: t.Array(t.Object({ name: t.String(), value: t.Number() })) })),
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
        body: PropertyBody,
        response: Ok(t.Object({ requestId: t.String(), properties: t.Record(t.String(), t.String()) })),
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
        body: RatingBody,
        response: Ok(t.Object({ sessionId: t.String(), rating: t.Number() })),
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
        body: TagBody,
        response: Ok(t.Object({ sessionId: t.String(), tags: t.Array(t.String()) })),
        detail: { summary: 'Tag a session' },
      },
    )
