import { nanoToUsd } from '../money/cost'
import type { Integration } from '../store/repositories/integrations'
import type { RequestRecord } from '../store/repositories/requests'
import type { NewDelivery, Webhook } from '../store/repositories/webhooks'
import { sha256 } from '../util/digest'

/** The events gw sends, by name. Budget events come from the spend controls. */
export const WEBHOOK_EVENTS = ['request.completed', 'budget.threshold_crossed', 'budget.breached', 'webhook.test'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

/** The one kind of event the outbox may drop, oldest first, when a destination has been down too long. */
export const DROPPABLE_EVENT: WebhookEvent = 'request.completed'

/** A message id as Standard Webhooks receivers expect one: the same on every attempt of one event. */
export const newMessageId = (): string => `msg_${crypto.randomUUID().replaceAll('-', '')}`

/** Sampling decided per event and webhook, the same way every time it is asked (a retried batch decides alike). */
export function sampled(webhook: Pick<Webhook, 'id' | 'sampleRate'>, eventKey: string): boolean {
  if (webhook.sampleRate >= 100) return true
  if (webhook.sampleRate <= 0) return false
  const draw = sha256(`${webhook.id}:${eventKey}`).readUInt32BE(0) % 100
  return draw < webhook.sampleRate
}

/** Every property filter of the webhook holds on the request. */
export const matchesProperties = (webhook: Pick<Webhook, 'propertyFilters'>, properties: Record<string, string> | null) =>
  Object.entries(webhook.propertyFilters).every(([key, value]) => properties?.[key] === value)

/** The captured bodies of a request, as the organisation's redaction policy leaves them. */
export interface CapturedBodies {
  request: string
  response: string
  truncated: boolean
}

export function requestCompletedData(record: RequestRecord, bodies?: CapturedBodies) {
  return {
    requestId: record.id,
    createdAt: record.createdAt.toISOString(),
    provider: record.provider,
    model: record.model,
    path: record.path,
    status: record.status,
    httpStatus: record.httpStatus,
    latencyMs: record.latencyMs,
    timeToFirstTokenMs: record.timeToFirstTokenMs,
    tokens: {
      prompt: record.promptTokens,
      completion: record.completionTokens,
      cacheRead: record.cacheReadTokens,
      cacheWrite: record.cacheWriteTokens,
      total: record.totalTokens,
    },
    cost: record.costNano === null ? null : nanoToUsd(record.costNano),
    userId: record.userId,
    sessionId: record.sessionId,
    apiKeyId: record.apiKeyId,
    properties: record.properties ?? {},
    error: record.error,
    ...(bodies ? { body: bodies } : {}),
  }
}

/** One event for one webhook, as the outbox holds it: the body is fixed here, and signed as it is at each attempt. */
export function deliveryOf(webhook: Webhook, event: WebhookEvent, data: unknown, at: Date): NewDelivery {
  const id = newMessageId()
  return {
    id,
    webhookId: webhook.id,
    integrationId: null,
    orgId: webhook.orgId,
    event,
    payload: JSON.stringify({ type: event, timestamp: at.toISOString(), data }),
    status: 'pending',
    nextAttemptAt: at,
    createdAt: at,
  }
}

/** The request.completed deliveries of freshly written records, for the webhooks that take them. */
export function requestCompletedDeliveries(
  webhooks: readonly Webhook[],
  written: ReadonlyArray<{ record: RequestRecord; bodies?: CapturedBodies }>,
  at: Date,
): NewDelivery[] {
  const deliveries: NewDelivery[] = []
  for (const { record, bodies } of written)
    for (const webhook of webhooks) {
      if (webhook.orgId !== record.orgId || !sampled(webhook, record.id) || !matchesProperties(webhook, record.properties))
        continue
      deliveries.push(
        deliveryOf(webhook, 'request.completed', requestCompletedData(record, webhook.includeData ? bodies : undefined), at),
      )
    }
  return deliveries
}

/** What a budget event carries. */
export interface BudgetEventData {
  limitId: string | null
  scope: { kind: string | null; id: string | null }
  metric: string | null
  /** In the metric's unit; USD for `usd`. */
  limit: number | null
  spent: number | null
  threshold: number | null
  windowStart: string | null
  action: string | null
  message: string | null
  /** A test or manual notice sent through `POST /v1/budget/notify`. */
  manual: boolean
}

/** A budget event as one line of Slack text. */
export function slackText(event: string, payload: string): string {
  const { data } = JSON.parse(payload) as { data: BudgetEventData }
  const headline = event === 'budget.breached' ? 'Budget breached' : 'Budget threshold crossed'
  const amount = (value: number | null) =>
    value === null ? '?' : data.metric === 'usd' ? `$${value}` : `${value} ${data.metric}`
  const parts = [`*gw: ${headline}*`]
  if (data.limitId) {
    const scope = data.scope.kind === 'org' ? 'the organization' : `${data.scope.kind} ${data.scope.id ?? '(each)'}`
    parts.push(`limit ${data.limitId} on ${scope}: ${amount(data.spent)} spent of ${amount(data.limit)}`)
    if (data.threshold !== null) parts.push(`(${data.threshold} %)`)
  }
  if (data.message) parts.push(`: ${data.message}`)
  return parts.join(' ')
}

/** The Stripe meter an integration reports to when it names none. */
export const DEFAULT_METER_EVENT = 'gw_tokens'

/** What a Stripe meter event of one call carries in the outbox. */
export interface MeterPayload {
  customerId: string
  value: number
  requestId: string
  /** When the call was made (ISO): the event's own time at Stripe. */
  at: string
}

/**
 * The Stripe meter events of freshly written records: each call that named a customer
 * (`Gw-Stripe-Customer-Id`) and used tokens, for its organisation's switched-on Stripe integration.
 */
export function meterDeliveries(stripes: readonly Integration[], records: readonly RequestRecord[], at: Date): NewDelivery[] {
  const byOrg = new Map(stripes.map((integration) => [integration.orgId, integration]))
  return records.flatMap((record): NewDelivery[] => {
    const integration = byOrg.get(record.orgId)
    if (!integration || !record.stripeCustomerId || !record.totalTokens) return []
    const payload: MeterPayload = {
      customerId: record.stripeCustomerId,
      value: record.totalTokens,
      requestId: record.id,
      at: record.createdAt.toISOString(),
    }
    return [
      {
        id: `meter_${record.id}`,
        webhookId: null,
        integrationId: integration.id,
        orgId: record.orgId,
        event: 'stripe.meter_event',
        payload: JSON.stringify(payload),
        status: 'pending',
        nextAttemptAt: at,
        createdAt: at,
      },
    ]
  })
}
