import { WEBHOOK_EVENTS } from '../../egress/events'
import { Maybe } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

export const WebhookParams = t.Object({ webhookId: t.String({ minLength: 1, maxLength: 64 }) })

const Event = oneOf(WEBHOOK_EVENTS, { error: `events must be among ${WEBHOOK_EVENTS.join(', ')}` })

export const CreateWebhookBody = t.Object(
  {
    destination: t.String({ minLength: 1, maxLength: 2000, description: 'https:// URL the events are POSTed to' }),
    events: t.Array(Event, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true }),
    sampleRate: t.Optional(
      t.Integer({ minimum: 0, maximum: 100, description: 'the percentage of events sent, decided per event; 100 by default' }),
    ),
    propertyFilters: t.Optional(
      t.Record(t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), t.String({ maxLength: 1000 }), {
        maxProperties: 20,
        description: 'properties a request must carry, every one, for its events to be sent',
      }),
    ),
    includeData: t.Optional(
      t.Boolean({ description: "request.completed carries the request's bodies (as captured, at most 64 KiB each)" }),
    ),
  },
  { additionalProperties: false },
)
export type CreateWebhookInput = typeof CreateWebhookBody.static

const LastDelivery = t.Object({
  event: t.String(),
  status: oneOf(['pending', 'delivered', 'dead']),
  attempts: t.Number(),
  httpStatus: Maybe(t.Number()),
  error: Maybe(t.String()),
  at: t.String({ format: 'date-time', description: 'when it was last attempted, or made when not attempted yet' }),
})

export const WebhookView = t.Object({
  id: t.String(),
  destination: t.String(),
  events: t.Array(t.String()),
  sampleRate: t.Number(),
  propertyFilters: t.Record(t.String(), t.String()),
  includeData: t.Boolean(),
  secretPrefix: t.String({
    description: 'the start of the signing secret, to tell secrets apart; the whole is shown only at creation',
  }),
  disabledAt: Maybe(t.String({ format: 'date-time', description: 'set when the destination answered 410 Gone' })),
  droppedEvents: t.Number({ description: 'request.completed events dropped while the destination was down too long' }),
  lastDelivery: Maybe(LastDelivery),
  createdAt: t.String({ format: 'date-time' }),
})

export const CreatedWebhook = t.Object({
  ...WebhookView.properties,
  secret: t.String({ description: 'the whsec_ signing secret (Standard Webhooks), shown this once' }),
})

export const TestResult = t.Object({
  ok: t.Boolean(),
  httpStatus: Maybe(t.Number()),
  latencyMs: t.Number(),
  error: Maybe(t.String()),
})

export const DeliveryView = t.Object({
  id: t.String({ description: 'the webhook-id header of every attempt' }),
  event: t.String(),
  status: oneOf(['pending', 'delivered', 'dead']),
  attempts: t.Number(),
  nextAttemptAt: Maybe(t.String({ format: 'date-time', description: 'when it is tried again; null once delivered or dead' })),
  lastHttpStatus: Maybe(t.Number()),
  lastError: Maybe(t.String()),
  lastAttemptAt: Maybe(t.String({ format: 'date-time' })),
  createdAt: t.String({ format: 'date-time' }),
})
