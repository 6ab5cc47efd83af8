import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { ErrorEnvelope, Ok } from '../../http/schema'
import type { AnnotationsService } from './annotations'
import type { GatewayTest } from './gateway-test'
import {
  AssetParams,
  Count,
  CountBody,
  GatewayTestBody,
  GatewayTestResult,
  IdsBody,
  PAGE_SIZES,
  Page,
  PropertyBody,
  QueryBody,
  RatingBody,
  RequestAsset,
  RequestParams,
  RequestProperties,
  RequestRating,
  RequestScores,
  RequestsById,
  ScoreBody,
  SessionAnnotations,
  SessionParams,
  SessionRating,
  SessionTags,
  TagBody,
} from './model'
import type { TrafficService } from './service'

const read = { catalogued: true as const }
const annotate = { catalogued: true as const }

/** Request queries (spec 4.5, `traffic.read`), annotations (`traffic.annotate`) and the gateway self-test. */
export const trafficRoutes = (authz: Authz, traffic: TrafficService, annotations: AnnotationsService, test: GatewayTest) =>
  new Elysia({ name: 'traffic-routes' })
    .use(authz)
    .post('/v1/request/query', ({ principal, body }) => answer(traffic.query(principal, body)), {
      ...read,
      body: QueryBody(PAGE_SIZES.request),
      response: Ok(Page),
      detail: { summary: 'Filter requests (wrapper "request"), newest first by default' },
    })
    .post(
      '/v1/request/query-clickhouse',
      ({ principal, body }) => answer(traffic.query(principal, body, 'request_response_rmt')),
      {
        ...read,
        body: QueryBody(PAGE_SIZES.request_response_rmt),
        response: Ok(Page),
        detail: { summary: 'Filter requests for bulk export (wrapper "request_response_rmt", larger pages, cursor paging)' },
      },
    )
    .post('/v1/request/count/query', ({ principal, body }) => answer(traffic.count(principal, body.filter)), {
      ...read,
      body: CountBody,
      response: Ok(Count),
      detail: { summary: 'Count the requests a filter matches' },
    })
    .post('/v1/request/query-ids', ({ principal, body }) => answer(traffic.byIds(principal, body)), {
      ...read,
      body: IdsBody,
      response: Ok(RequestsById),
      detail: { summary: 'Requests by id' },
    })
    .post(
      '/v1/request/:requestId/assets/:assetId',
      ({ principal, params }) => answer(traffic.asset(principal, params.requestId, params.assetId)),
      {
        ...read,
        params: AssetParams,
        response: { ...Ok(RequestAsset), 404: ErrorEnvelope },
        detail: { summary: "One of a request's assets (none are stored yet: always 404)" },
      },
    )
    .post('/v1/test/gateway-request', ({ principal, body }) => answer(test.run(principal, body)), {
      ...read,
      body: GatewayTestBody,
      response: Ok(GatewayTestResult),
      detail: { summary: "One small chat call through the organisation's own gateway path, and its outcome" },
    })
    .post(
      '/v1/request/:requestId/feedback',
      ({ principal, params, body }) => answer(annotations.requestFeedback(principal, params.requestId, body.rating)),
      {
        ...annotate,
        params: RequestParams,
        body: RatingBody,
        response: Ok(RequestRating),
        detail: { summary: 'Rate a request' },
      },
    )
    .post(
      '/v1/request/:requestId/score',
      ({ principal, params, body }) => answer(annotations.score(principal, params.requestId, body.name, body.value)),
      {
        ...annotate,
        params: RequestParams,
        body: ScoreBody,
        response: Ok(RequestScores),
        detail: { summary: 'Score a request under a name (the latest value counts)' },
      },
    )
    .put(
      '/v1/request/:requestId/property',
      ({ principal, params, body }) => answer(annotations.setProperty(principal, params.requestId, body.key, body.value)),
      {
        ...annotate,
        params: RequestParams,
        body: PropertyBody,
        response: Ok(RequestProperties),
        detail: { summary: "Set one of a request's properties" },
      },
    )
    .get(
      '/v1/session/:sessionId/annotations',
      ({ principal, params }) => answer(annotations.sessionAnnotations(principal, params.sessionId)),
      {
        catalogued: true,
        params: SessionParams,
        response: Ok(SessionAnnotations),
        detail: { summary: "A session's rating and tags" },
      },
    )
    .post(
      '/v1/session/:sessionId/feedback',
      ({ principal, params, body }) => answer(annotations.sessionFeedback(principal, params.sessionId, body.rating)),
      {
        ...annotate,
        params: SessionParams,
        body: RatingBody,
        response: Ok(SessionRating),
        detail: { summary: 'Rate a session' },
      },
    )
    .post(
      '/v1/session/:sessionId/tag',
      ({ principal, params, body }) => answer(annotations.tagSession(principal, params.sessionId, body.tag)),
      {
        ...annotate,
        params: SessionParams,
        body: TagBody,
        response: Ok(SessionTags),
        detail: { summary: 'Tag a session' },
      },
    )
