import type { Principal } from '../../auth/principal'
import { sealContexts, type Vault } from '../../auth/vault'
import type { Deliverer } from '../../egress/deliverer'
import { deliveryOf } from '../../egress/events'
import type { EgressPolicy } from '../../egress/policy'
import { newSigningSecret, secretPrefix } from '../../egress/signing'
import { egressDisabled, notFound } from '../../errors'
import type { Delivery, Webhook } from '../../store/repositories/webhooks'
import type { Store } from '../../store/store'
import type { CreateWebhookInput } from './model'

const DELIVERIES_SHOWN = 100

const iso = (at: Date | null) => (at === null ? null : at.toISOString())

const deliveryView = (delivery: Delivery) => ({
  id: delivery.id,
  event: delivery.event,
  status: delivery.status,
  attempts: delivery.attempts,
  nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
  lastHttpStatus: delivery.lastHttpStatus,
  lastError: delivery.lastError,
  lastAttemptAt: iso(delivery.lastAttemptAt),
  createdAt: delivery.createdAt.toISOString(),
})

/** A webhook as reads show it: the signing secret only by its prefix. */
const view = (webhook: Webhook, last: Delivery | undefined) => ({
  id: webhook.id,
  destination: webhook.destination,
  events: webhook.events,
  sampleRate: webhook.sampleRate,
  propertyFilters: webhook.propertyFilters,
  includeData: webhook.includeData,
  secretPrefix: webhook.secretPrefix,
  disabledAt: iso(webhook.disabledAt),
  droppedEvents: webhook.droppedEvents,
  lastDelivery: last
    ? {
        event: last.event,
        status: last.status,
        attempts: last.attempts,
        httpStatus: last.lastHttpStatus,
        error: last.lastError,
        at: (last.lastAttemptAt ?? last.createdAt).toISOString(),
      }
    : null,
  createdAt: webhook.createdAt.toISOString(),
})

/** Webhooks (spec 4.6 `egress.write`): where an organisation's events go, signed, retried and checked. */
export class WebhooksService {
  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly egress: EgressPolicy,
    private readonly deliverer: Deliverer,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    const org = this.store.org(principal.orgId).webhooks
    const [webhooks, last] = await Promise.all([org.list(), org.lastDeliveries()])
    return webhooks.map((webhook) => view(webhook, last.get(webhook.id)))
  }

  /** A new webhook; its signing secret is in this answer and never again. */
  async create(principal: Principal, input: CreateWebhookInput) {
    this.egress.requireSavable(input.destination, 'destination')
    const id = crypto.randomUUID()
    const secret = newSigningSecret()
    const webhook: Webhook = {
      id,
      orgId: principal.orgId,
      destination: input.destination,
      events: input.events,
      sampleRate: input.sampleRate ?? 100,
      propertyFilters: Object.fromEntries(Object.entries(input.propertyFilters ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
      includeData: input.includeData ?? false,
      sealedSecret: await this.vault.seal(secret, sealContexts.webhookSecret({ orgId: principal.orgId, id })),
      secretPrefix: secretPrefix(secret),
      disabledAt: null,
      droppedEvents: 0,
      createdAt: new Date(this.now()),
    }
    await this.store.org(principal.orgId).webhooks.add(webhook)
    return { ...view(webhook, undefined), secret }
  }

  async remove(principal: Principal, webhookId: string) {
    if (!(await this.store.org(principal.orgId).webhooks.remove(webhookId))) throw notFound('webhook')
    return { id: webhookId, deleted: true as const }
  }

  /** Sends a `webhook.test` event now, once, and answers how it went; it is kept among the deliveries. */
  async test(principal: Principal, webhookId: string) {
    const webhook = await this.store.org(principal.orgId).webhooks.get(webhookId)
    if (!webhook) throw notFound('webhook')
    if (!this.egress.enabled) throw egressDisabled()
    const at = new Date(this.now())
    const delivery = deliveryOf(webhook, 'webhook.test', { webhookId: webhook.id }, at)
    const result = await this.deliverer.send(webhook, delivery)
    await this.store.deliveries.record({
      ...delivery,
      status: result.ok ? 'delivered' : 'dead',
      attempts: 1,
      leaseUntil: null,
      lastHttpStatus: result.httpStatus,
      lastError: result.error,
      lastAttemptAt: new Date(this.now()),
    })
    return result
  }

  async deliveries(principal: Principal, webhookId: string) {
    const org = this.store.org(principal.orgId).webhooks
    if (!(await org.get(webhookId))) throw notFound('webhook')
    return (await org.deliveries(DELIVERIES_SHOWN, webhookId)).map(deliveryView)
  }
}
