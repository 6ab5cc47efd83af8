import { NextCursor, OffsetPage, type PageSize, Paging } from '../../http/schema'
import { Maybe } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

/** Interactive pages stay small; bulk export pages are larger. */
export const PAGE_SIZES = {
  request: { maxLimit: 1_000, defaultLimit: 100 },
  request_response_rmt: { maxLimit: 10_000, defaultLimit: 100 },
} as const satisfies Record<string, PageSize>

const Direction = oneOf(['asc', 'desc'])

export const QueryBody = (size: PageSize) => {
  const { offset, limit, cursor } = Paging(size)
  return t.Object(
    {
      filter: t.Optional(t.Unknown({ description: 'a request filter (spec 2.5), or "all"' })),
      offset,
      limit,
      sort: t.Optional(
        t.Partial(
          t.Object(
            { created_at: Direction, latency_ms: Direction, cost: Direction, total_tokens: Direction },
            { additionalProperties: false, description: 'one field; created_at desc by default' },
          ),
        ),
      ),
      cursor,
      includeBodies: t.Optional(t.Boolean()),
    },
    { additionalProperties: false, description: 'a page by offset, or by cursor (for sorts by created_at, without offset)' },
  )
}
export type QueryInput = ReturnType<typeof QueryBody>['static']

export const CountBody = t.Object({ filter: t.Optional(t.Unknown()) }, { additionalProperties: false })

export const IdsBody = t.Object(
  {
    requestIds: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 1_000 }),
    includeBodies: t.Optional(t.Boolean()),
    includeAnnotations: t.Optional(
      t.Boolean({ description: "each request's rating, scores and security flags, as `annotations`" }),
    ),
  },
  { additionalProperties: false },
)

const Nullable = {
  string: Maybe(t.String()),
  number: Maybe(t.Number()),
}

/** One request of the log as the query routes show it; costs in USD. */
export const RequestView = t.Object({
  id: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  provider: t.String(),
  model: t.String(),
  path: t.String(),
  status: oneOf(['success', 'error']),
  httpStatus: t.Number(),
  gatewayMode: Maybe(oneOf(['passthrough', 'translated'])),
  translationWarning: Nullable.string,
  userId: Nullable.string,
  sessionId: Nullable.string,
  customerId: Nullable.string,
  apiKeyId: Nullable.string,
  country: Nullable.string,
  properties: t.Record(t.String(), t.String()),
  latencyMs: Nullable.number,
  timeToFirstTokenMs: Nullable.number,
  tokens: t.Object({
    prompt: Nullable.number,
    completion: Nullable.number,
    cacheRead: Nullable.number,
    cacheWrite: Nullable.number,
    total: Nullable.number,
  }),
  cost: Nullable.number,
  costNote: Nullable.string,
  estimatedCost: Nullable.number,
  ptb: t.Boolean(),
  error: Nullable.string,
  body: t.Optional(t.Object({ request: t.String(), response: Nullable.string, truncated: t.Boolean() })),
  annotations: t.Optional(
    t.Object({
      rating: Maybe(t.Number({ description: '-1 to 1; true is 1, false is 0; null when not rated' })),
      scores: t.Array(t.Object({ name: t.String(), value: t.Number() })),
      flags: t.Array(
        t.Object({
          kind: oneOf(['pii', 'injection']),
          category: t.String({ description: 'a kind of personal data (email, phone, card, secret) or an injection rule' }),
          occurrences: t.Number(),
        }),
        { description: 'what the security scan found in the bodies: counts, never the matched text' },
      ),
    }),
  ),
})

export type IdsInput = typeof IdsBody.static

export const Count = t.Object({ count: t.Number() })

export const RequestsById = t.Object({ requests: t.Array(RequestView) })

export const Page = t.Object({ requests: t.Array(RequestView), ...OffsetPage, nextCursor: NextCursor })

export const Rating = t.Union([t.Boolean(), t.Number({ minimum: -1, maximum: 1 })], {
  error: 'rating must be true/false or a number from -1 to 1',
})
export const RequestParams = t.Object({ requestId: t.String({ minLength: 1, maxLength: 64 }) })
export const AssetParams = t.Object({ requestId: t.String({ maxLength: 64 }), assetId: t.String({ maxLength: 200 }) })
/**
 * One of a request's assets (an image or a file it carried): where to fetch it. None are stored yet, so
 * the route answers 404; the document still says what its success is, as for every built route.
 */
export const RequestAsset = t.Object({ assetUrl: t.String({ description: 'where the asset can be fetched, for a short while' }) })
export const SessionParams = t.Object({ sessionId: t.String({ minLength: 1, maxLength: 200 }) })
export const RatingBody = t.Object({ rating: Rating }, { additionalProperties: false })
export const ScoreBody = t.Object(
  {
    name: t.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', error: 'name must be 1-64 letters, digits, _, . or -' }),
    value: t.Number(),
  },
  { additionalProperties: false },
)
export const PropertyBody = t.Object(
  {
    key: t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', error: 'key must be 1-64 letters, digits, - and _' }),
    value: t.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
)
export const TagBody = t.Object({ tag: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false })

export const RequestRating = t.Object({ requestId: t.String(), rating: t.Number({ description: 'true is 1, false is 0' }) })
export const RequestScores = t.Object({
  requestId: t.String(),
  scores: t.Array(t.Object({ name: t.String(), value: t.Number() }), {
    description: "the request's scores, the latest per name",
  }),
})
export const RequestProperties = t.Object({ requestId: t.String(), properties: t.Record(t.String(), t.String()) })
export const SessionRating = t.Object({ sessionId: t.String(), rating: t.Number({ description: 'true is 1, false is 0' }) })
export const SessionTags = t.Object({ sessionId: t.String(), tags: t.Array(t.String()) })
export const SessionAnnotations = t.Object({
  sessionId: t.String(),
  rating: Maybe(t.Number({ description: 'true is 1, false is 0; null when not rated' })),
  tags: t.Array(t.String()),
})

export const GatewayTestBody = t.Object(
  {
    model: t.String({
      minLength: 1,
      maxLength: 200,
      description:
        'as a gateway call names it: a bare name the catalogue knows (gpt-4o), or <provider>/<model> for any provider (groq/llama-3.3-70b-versatile)',
    }),
    prompt: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: '"ping" by default' })),
    providerKeyId: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 64,
        description:
          "one of the organization's own provider keys: the call runs on it alone, as a proxy key bound to it would; a model named without a provider goes to the key's",
      }),
    ),
  },
  { additionalProperties: false },
)
export type GatewayTestInput = typeof GatewayTestBody.static

export const GatewayTestResult = t.Object({
  ok: t.Boolean({ description: 'the provider answered successfully through the gateway path' }),
  requestId: t.String(),
  httpStatus: t.Number(),
  provider: t.String(),
  model: t.String(),
  gatewayMode: t.String(),
  latencyMs: t.Number(),
  cost: Nullable.number,
  answer: Maybe(t.String({ description: "the model's reply, when it answered with text" })),
  error: Nullable.string,
})
