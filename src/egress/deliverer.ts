import { sealContexts, type Vault } from '../auth/vault'
import type { Logger } from '../log'
import type { Integration } from '../store/repositories/integrations'
import type { ClaimedDelivery, Delivery, Webhook } from '../store/repositories/webhooks'
import type { Store } from '../store/store'
import { VERSION } from '../version'
import { DEFAULT_METER_EVENT, DROPPABLE_EVENT, type MeterPayload, slackText } from './events'
import { type EgressPolicy, EgressRefused } from './policy'
import { type ServiceUrls, slackPost, stripeMeterEvent } from './services'

/**
 * When a failed delivery is tried again, in seconds after the attempt that failed: about 27 hours in
 * all over ten attempts, so a receiver down for a night still gets everything. Each wait is varied by
 * up to a fifth either way, so the deliveries a receiver's outage held back do not all return at once.
 */
export const RETRY_SCHEDULE_SECONDS = [30, 120, 600, 1_800, 3_600, 7_200, 14_400, 28_800, 43_200] as const

export interface DelivererOptions {
  store: Store
  vault: Vault
  egress: EgressPolicy
  /** Where the integrations' services are (Stripe's API, for meter events). */
  urls: ServiceUrls
  log: Logger
  now?: () => number
  /** Waits between attempts (seconds); tests shorten them. */
  schedule?: readonly number[]
  /** How long one attempt may take before it counts as failed. */
  attemptTimeoutMs?: number
  /** How often the outbox is looked at when it had nothing due. */
  pollMs?: number
  /** Attempts taken at once by this instance. */
  batch?: number
  /** Pending request.completed events kept per webhook; older ones beyond it are dropped. */
  outboxCap?: number
  /** Told what each attempt came to (metrics, when configured). */
  observer?: DeliveryObserver
}

/**
 * What an attempt came to: `delivered`; `failed`, to be tried again; `dead`, with no attempt left (or
 * its integration switched off); `gone`, its destination answered 410 and the webhook is disabled.
 */
export type DeliveryOutcome = 'delivered' | 'failed' | 'dead' | 'gone'

export interface DeliveryObserver {
  deliveryAttempted(outcome: DeliveryOutcome): void
}

/** What one attempt came to. */
export interface AttemptResult {
  ok: boolean
  httpStatus: number | null
  latencyMs: number
  error: string | null
}

const TRIM_EVERY_MS = 60_000

/**
 * Sends the outbox. Every instance runs one; an attempt is leased to one instance at a time, so two
 * never send it together, and one that died mid-attempt leaves it to be taken again when the lease
 * runs out. Nothing is held only in memory: a restart resumes where the rows say.
 */
export class Deliverer {
  private readonly now: () => number
  private readonly retryWaits: readonly number[]
  private readonly attemptTimeoutMs: number
  private readonly pollMs: number
  private readonly batch: number
  private readonly outboxCap: number
  private timer: ReturnType<typeof setTimeout> | undefined
  private running: Promise<void> | undefined
  private stopped = true
  private lastTrim = 0

  constructor(private readonly options: DelivererOptions) {
    this.now = options.now ?? Date.now
    this.retryWaits = options.schedule ?? RETRY_SCHEDULE_SECONDS
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000
    this.pollMs = options.pollMs ?? 1_000
    this.batch = options.batch ?? 20
    this.outboxCap = options.outboxCap ?? 10_000
  }

  /**
   * The first pass comes one poll interval after the start, not at once: at `gw serve`'s start it would
   * take the event loop (its first query is its slowest) while the server begins to answer.
   */
  start(): void {
    this.stopped = false
    this.next(this.pollMs)
  }

  /** Stops taking attempts and waits for those under way to be settled. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  /** One pass over the outbox: answers how many attempts it made. */
  async tick(): Promise<number> {
    const { store, log } = this.options
    if (this.now() - this.lastTrim >= TRIM_EVERY_MS) {
      this.lastTrim = this.now()
      const dropped = await store.deliveries.trim(this.outboxCap, DROPPABLE_EVENT)
      if (dropped > 0) log.warn('webhook outbox full: oldest request.completed events dropped', { dropped })
    }
    if (!this.options.egress.enabled) return 0
    const now = new Date(this.now())
    const lease = new Date(this.now() + this.attemptTimeoutMs * 2 + 5_000)
    const claimed = await store.deliveries.claim(now, lease, this.batch)
    await Promise.all(claimed.map((taken) => this.attempt(taken, lease)))
    return claimed.length
  }

  /** Sends one delivery now, signed, to its webhook's destination, checked at connection time. */
  async send(webhook: Webhook, delivery: Pick<Delivery, 'id' | 'payload'>): Promise<AttemptResult> {
    const started = performance.now()
    const latency = () => Math.round(performance.now() - started)
    try {
      const secret = await this.options.vault.open(webhook.sealedSecret, sealContexts.webhookSecret(webhook))
      // The Standard Webhooks library is read with the first delivery, not at every start.
      const { signedHeaders } = await import('./signing')
      // A redirect counts as a failure: the receiver must answer at the address it gave.
      const response = await this.options.egress.fetch(webhook.destination, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': `gw-webhooks/${VERSION}`,
          ...signedHeaders(secret, delivery.id, new Date(this.now()), delivery.payload),
        },
        body: delivery.payload,
        timeoutMs: this.attemptTimeoutMs,
      })
      await response.body?.cancel()
      const ok = response.status >= 200 && response.status < 300
      return {
        ok,
        httpStatus: response.status,
        latencyMs: latency(),
        error: ok ? null : `the destination answered ${response.status}`,
      }
    } catch (error) {
      const message =
        error instanceof EgressRefused
          ? error.message
          : (error as Error).name === 'TimeoutError'
            ? `no answer within ${this.attemptTimeoutMs} ms`
            : `the destination could not be reached: ${(error as Error).message}`
      return { ok: false, httpStatus: null, latencyMs: latency(), error: message }
    }
  }

  /**
   * A Stripe meter event of one call: its tokens for the customer it named, under an identifier made
   * from the request id, so Stripe counts the call once however often it is sent.
   */
  private async meter(integration: Integration, delivery: Delivery): Promise<AttemptResult> {
    const started = performance.now()
    const { customerId, value, requestId, at } = JSON.parse(delivery.payload) as MeterPayload
    try {
      const secrets = JSON.parse(
        await this.options.vault.open(integration.sealedSecrets, sealContexts.integrationSecrets(integration)),
      )
      await stripeMeterEvent(this.options.urls.stripeApiUrl, (secrets as { secretKey?: string }).secretKey ?? '', {
        eventName: integration.settings.meterEventName ?? DEFAULT_METER_EVENT,
        customerId,
        value,
        identifier: `gw-${requestId}`,
        at: new Date(at),
      })
      return { ok: true, httpStatus: null, latencyMs: Math.round(performance.now() - started), error: null }
    } catch (error) {
      return { ok: false, httpStatus: null, latencyMs: Math.round(performance.now() - started), error: (error as Error).message }
    }
  }

  /**
   * An event told in Slack: through the integration's incoming webhook (an address its owner gave, so
   * through the egress rules), else posted with its bot token to its channel.
   */
  private async slack(integration: Integration, delivery: Delivery): Promise<AttemptResult> {
    const started = performance.now()
    const latency = () => Math.round(performance.now() - started)
    try {
      const secrets = JSON.parse(
        await this.options.vault.open(integration.sealedSecrets, sealContexts.integrationSecrets(integration)),
      ) as { webhookUrl?: string; botToken?: string }
      const text = slackText(delivery.event, delivery.payload)
      if (secrets.webhookUrl) {
        const response = await this.options.egress.fetch(secrets.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
          timeoutMs: this.attemptTimeoutMs,
        })
        await response.body?.cancel()
        const ok = response.status >= 200 && response.status < 300
        return { ok, httpStatus: response.status, latencyMs: latency(), error: ok ? null : `Slack answered ${response.status}` }
      }
      const channel = integration.settings.channel
      if (!secrets.botToken || !channel)
        return {
          ok: false,
          httpStatus: null,
          latencyMs: latency(),
          error: 'the Slack integration has no webhookUrl, nor a botToken and a channel',
        }
      await slackPost(this.options.urls.slackApiUrl, secrets.botToken, channel, text)
      return { ok: true, httpStatus: null, latencyMs: latency(), error: null }
    } catch (error) {
      return { ok: false, httpStatus: null, latencyMs: latency(), error: (error as Error).message }
    }
  }

  private async attempt(taken: ClaimedDelivery, lease: Date): Promise<void> {
    const { store, log } = this.options
    const { delivery } = taken
    const at = new Date(this.now())
    if ('integration' in taken && !taken.integration.active) {
      await store.deliveries.settle(delivery.id, lease, {
        status: 'dead',
        attempts: delivery.attempts,
        nextAttemptAt: delivery.nextAttemptAt,
        lastHttpStatus: null,
        lastError: 'the integration is switched off',
        lastAttemptAt: at,
      })
      this.options.observer?.deliveryAttempted('dead')
      return
    }
    const result =
      'webhook' in taken
        ? await this.send(taken.webhook, delivery)
        : taken.integration.type === 'slack'
          ? await this.slack(taken.integration, delivery)
          : await this.meter(taken.integration, delivery)
    const attempts = delivery.attempts + 1
    if ('webhook' in taken && result.httpStatus === 410) {
      await store.deliveries.disable(taken.webhook.id, at)
      log.warn('a webhook destination answered 410 Gone: the webhook is disabled', { webhookId: taken.webhook.id })
      this.options.observer?.deliveryAttempted('gone')
      return
    }
    const wait = this.retryWaits[attempts - 1]
    const status = result.ok ? 'delivered' : wait === undefined ? 'dead' : 'pending'
    const jitter = 1 + (Math.random() * 2 - 1) / 5
    const settled = await store.deliveries.settle(delivery.id, lease, {
      status,
      attempts,
      nextAttemptAt: status === 'pending' ? new Date(at.getTime() + (wait ?? 0) * 1000 * jitter) : delivery.nextAttemptAt,
      lastHttpStatus: result.httpStatus,
      lastError: result.error,
      lastAttemptAt: new Date(this.now()),
    })
    this.options.observer?.deliveryAttempted(status === 'pending' ? 'failed' : status)
    if (!settled) log.warn('an outbox attempt outlived its lease; another instance may have sent it again', { id: delivery.id })
    if (status === 'dead')
      log.warn('an outbox delivery is dead after its last attempt', { id: delivery.id, event: delivery.event })
  }

  private next(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .then((made) => this.next(made >= this.batch ? 0 : this.pollMs))
        .catch((error: unknown) => {
          this.options.log.error('the webhook deliverer failed a pass; it tries again', { error: String(error) })
          this.next(this.pollMs)
        })
    }, delayMs)
  }
}
