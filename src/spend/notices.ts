import { type BudgetEventData, deliveryOf, type WebhookEvent } from '../egress/events'
import type { Logger } from '../log'
import type { BudgetNotice } from '../store/repositories/budgets'
import type { NewDelivery } from '../store/repositories/webhooks'
import type { Repositories, Store } from '../store/store'
import { orderedId } from '../util/ordered-id'
import type { CounterState } from './counters'
import { type AppliedLimit, type Hold, inUnit, type SpendCall } from './enforcer'
import type { AlertConfig } from './policy'

/** The percentage at which a limit is breached. */
const BREACHED = 100
/** Notices this instance knows are recorded; beyond this many it forgets them all and asks the database again. */
const KNOWN_MAX = 50_000

export const eventData = (notice: BudgetNotice, action: string | null): BudgetEventData => ({
  limitId: notice.limitId,
  scope: { kind: notice.scopeKind, id: notice.scopeId || null },
  metric: notice.metric,
  limit: notice.amount === null ? null : inUnit(notice.metric, notice.amount),
  spent: notice.spent === null ? null : inUnit(notice.metric, notice.spent),
  threshold: notice.threshold,
  windowStart: notice.windowStart?.toISOString() ?? null,
  action,
  message: notice.message,
  manual: notice.kind === 'manual' || notice.kind === 'notify',
})

/**
 * The outbox rows of a budget event, on the organisation's channels: its webhooks that subscribe to the
 * event, and its Slack integration. Written in the transaction that records the notice, so an event
 * goes out exactly when its notice is recorded, once.
 */
export async function budgetDeliveries(
  tx: Repositories,
  notice: BudgetNotice,
  event: WebhookEvent,
  data: BudgetEventData,
  channels: readonly string[],
): Promise<NewDelivery[]> {
  const deliveries: NewDelivery[] = []
  if (channels.includes('webhook'))
    for (const webhook of await tx.deliveries.subscribers([notice.orgId], event))
      deliveries.push(deliveryOf(webhook, event, data, notice.createdAt))
  if (channels.includes('slack'))
    for (const slack of await tx.deliveries.activeIntegrations([notice.orgId], 'slack'))
      deliveries.push({
        id: `slack_${notice.id}`,
        webhookId: null,
        integrationId: slack.id,
        orgId: notice.orgId,
        event,
        payload: JSON.stringify({ type: event, timestamp: notice.createdAt.toISOString(), data }),
        status: 'pending',
        nextAttemptAt: notice.createdAt,
        createdAt: notice.createdAt,
      })
  return deliveries
}

/**
 * What budgets did: refusals and downgrades in `budget_actions` (before the caller's answer), and, off
 * the call's path, the notices (thresholds reached, breaches) once per limit, scope value, window and
 * threshold across every instance: the notice table's unique index decides who records it, and the
 * events go out in the same transaction. A failure to record is logged; it never fails the call.
 */
export class BudgetNotices {
  private readonly known = new Set<string>()

  constructor(private readonly deps: { store: Store; log: Logger; now?: () => number }) {}

  private get now(): number {
    return (this.deps.now ?? Date.now)()
  }

  /**
   * A refusal is in `budget_actions` by the time the caller has its 429 (a report read right after
   * shows it); its breach notice and events follow off the call's path.
   */
  async refused(call: SpendCall, applied: AppliedLimit, state: CounterState, amount: number, alerts: AlertConfig): Promise<void> {
    await this.action(call, applied, 'block', applied.limit.metric === 'usd' ? amount : null).catch((error: unknown) =>
      this.deps.log.warn('budget refusal not recorded', { error: String(error) }),
    )
    this.later('budget breach', () => this.notice(applied, BREACHED, state.spent + state.reserved, alerts))
  }

  async downgraded(call: SpendCall, applied: AppliedLimit): Promise<void> {
    await this.action(call, applied, 'downgrade', call.worst.usd !== undefined ? call.worst.usd : null).catch((error: unknown) =>
      this.deps.log.warn('budget downgrade not recorded', { error: String(error) }),
    )
  }

  /** After a settlement: each threshold the spend has reached, and the breach at 100 %, told once. */
  reached(hold: Hold, spent: readonly number[]): void {
    hold.applied.forEach((applied, i) => {
      const used = spent[i] ?? 0
      const amount = applied.limit.amount
      if (amount <= 0 || used <= 0) return
      for (const threshold of hold.alerts.levels) {
        if (used * 100 < threshold * amount) break
        if (this.known.has(this.knownKey(applied, threshold))) continue
        this.later('budget alert', () => this.notice(applied, threshold, used, hold.alerts))
      }
    })
  }

  private knownKey(applied: AppliedLimit, threshold: number): string {
    return `${applied.limit.id}|${applied.value}|${this.windowStart(applied)}|${threshold}`
  }

  /** A sliding window has no start: its notices are told once per window-length span of the clock. */
  private windowStart(applied: AppliedLimit): number {
    const { limit } = applied
    if (limit.kind !== 'velocity') return applied.window.start
    const length = limit.periodSeconds * 1000
    return Math.floor(this.now / length) * length
  }

  private async notice(applied: AppliedLimit, threshold: number, spent: number, alerts: AlertConfig): Promise<void> {
    const key = this.knownKey(applied, threshold)
    if (this.known.has(key)) return
    const { limit, value } = applied
    const breach = threshold >= BREACHED
    const notice: BudgetNotice = {
      id: orderedId(),
      orgId: limit.orgId,
      kind: breach ? 'breach' : 'threshold',
      limitId: limit.id,
      scopeKind: limit.scopeKind,
      scopeId: value,
      metric: limit.metric,
      windowStart: new Date(this.windowStart(applied)),
      threshold,
      spent: Math.round(spent),
      amount: limit.amount,
      message: null,
      createdBy: null,
      createdAt: new Date(this.now),
    }
    const event: WebhookEvent = breach ? 'budget.breached' : 'budget.threshold_crossed'
    await this.deps.store.transaction(async (tx) => {
      if (!(await tx.org(limit.orgId).budgetNotices.add(notice))) return
      await tx.deliveries.enqueue(await budgetDeliveries(tx, notice, event, eventData(notice, limit.action), alerts.channels))
    })
    if (this.known.size >= KNOWN_MAX) this.known.clear()
    this.known.add(key)
  }

  private async action(
    call: SpendCall,
    applied: AppliedLimit,
    action: 'block' | 'downgrade',
    amountNano: number | null,
  ): Promise<void> {
    await this.deps.store.budgetActions.add({
      id: orderedId(),
      orgId: call.orgId,
      scope: applied.limit.scopeKind,
      scopeId: applied.value || null,
      action,
      requestId: call.requestId,
      model: call.model,
      amountNano,
      createdAt: new Date(this.now),
    })
  }

  private later(what: string, work: () => Promise<void>): void {
    work().catch((error: unknown) => this.deps.log.warn(`${what} not recorded`, { error: String(error) }))
  }
}
