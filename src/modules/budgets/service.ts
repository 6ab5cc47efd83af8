import type { Principal } from '../../auth/principal'
import { PROVIDER_NAMES } from '../../directory/providers'
import { badRequest, conflict, notFound } from '../../errors'
import { NANO_PER_USD } from '../../money/cost'
import { decodeCursor, keysetPage } from '../../query/cursor'
import { type BudgetEnforcer, inUnit, type LimitState } from '../../spend/enforcer'
import { budgetDeliveries, eventData } from '../../spend/notices'
import { DEFAULT_ALERTS, type SpendPolicies } from '../../spend/policy'
import type { RecordRetention } from '../../spend/retention'
import { isTimezone, windowSettingsOf } from '../../spend/windows'
import type { BudgetLimit, BudgetNotice, DowngradeMapping, Metric } from '../../store/repositories/budgets'
import type { OrganizationSettings } from '../../store/repositories/organization-settings'
import type { Store } from '../../store/store'
import { orderedId } from '../../util/ordered-id'
import {
  type AlertConfigInput,
  BREACHES_PAGE,
  type BreachesPage,
  type BreachInput,
  type CustomerBudgetInput,
  type DowngradeMappingInput,
  type MemberBudgetInput,
  type NotifyInput,
  type VelocityLimitInput,
  type WindowLimitInput,
  type WindowSettingsInput,
} from './model'

type Scope = WindowLimitInput['scope']
type WindowInput = WindowLimitInput['window']

/** The most a USD amount may be: its nano-USD fit the database's 64-bit integers with room to add. */
const MAX_USD = 1e9
/** A limit is shown as near its end from here, when the organisation set no alert threshold. */
const WARNING_PERCENT = 80

/** A limit's amount as stored: nano-USD, or a whole number of tokens or requests. */
function storedAmount(metric: Metric, limit: number): number {
  if (metric === 'usd') {
    if (limit > MAX_USD) throw badRequest(`a USD amount may be at most ${MAX_USD.toLocaleString('en-US')}`)
    return Math.round(limit * NANO_PER_USD)
  }
  if (!Number.isInteger(limit)) throw badRequest(`a limit on ${metric} must be a whole number`)
  return limit
}

const periodOf = (window: WindowInput): Pick<BudgetLimit, 'period' | 'periodSeconds'> =>
  typeof window === 'string' ? { period: window, periodSeconds: 0 } : { period: 'seconds', periodSeconds: window.seconds }

/** The alert config as the API shows it; the defaults when the organisation set none. */
const alertConfigOf = (settings: Pick<OrganizationSettings, 'alertThresholds' | 'alertChannels'>) => ({
  thresholds: settings.alertThresholds ?? [...DEFAULT_ALERTS.thresholds],
  channels: settings.alertChannels ?? [...DEFAULT_ALERTS.channels],
  configured: settings.alertThresholds !== null,
})

const view = (limit: BudgetLimit) => ({
  id: limit.id,
  kind: limit.kind,
  scope: { kind: limit.scopeKind, id: limit.scopeId || null },
  metric: limit.metric,
  limit: inUnit(limit.metric, limit.amount),
  window: limit.period === 'seconds' ? { seconds: limit.periodSeconds } : limit.period,
  action: limit.action,
  createdAt: limit.createdAt.toISOString(),
  updatedAt: limit.updatedAt.toISOString(),
})

const mappingView = (m: DowngradeMapping) => ({
  id: m.id,
  fromModel: m.fromModel,
  toModel: m.toModel,
  atPercent: m.atPercent,
  createdAt: m.createdAt.toISOString(),
})

const noticeView = (n: BudgetNotice) => ({
  id: n.id,
  kind: n.kind,
  limitId: n.limitId,
  scope: { kind: n.scopeKind, id: n.scopeId || null },
  metric: n.metric,
  windowStart: n.windowStart?.toISOString() ?? null,
  threshold: n.threshold,
  spent: n.spent === null ? null : inUnit(n.metric, n.spent),
  limit: n.amount === null ? null : inUnit(n.metric, n.amount),
  message: n.message,
  createdBy: n.createdBy,
  createdAt: n.createdAt.toISOString(),
})

/**
 * The spend controls of an organisation (spec 4.6 `spend_controls.write`, and `reports.read` for the
 * summary, customers and breaches): limits at every scope, the windows they count in, alerts,
 * downgrades, and the breach log. Every change is in force on this instance at once and on the others
 * within the policy cache's second.
 */
export class BudgetsService {
  constructor(
    private readonly store: Store,
    private readonly policies: SpendPolicies,
    private readonly enforcer: BudgetEnforcer,
    private readonly retention: RecordRetention,
    private readonly now: () => number = Date.now,
  ) {}

  async putWindowLimit(principal: Principal, input: WindowLimitInput) {
    const scope = await this.checkedScope(principal, input.scope)
    return this.save(principal, input.id, {
      kind: 'window',
      ...scope,
      metric: input.metric,
      amount: storedAmount(input.metric, input.limit),
      ...periodOf(input.window),
      action: input.action ?? 'block',
    })
  }

  async putVelocityLimit(principal: Principal, input: VelocityLimitInput) {
    const scope = await this.checkedScope(principal, input.scope)
    return this.save(principal, input.id, {
      kind: 'velocity',
      ...scope,
      metric: 'usd',
      amount: storedAmount('usd', input.maxUsd),
      period: 'seconds',
      periodSeconds: input.windowSeconds,
      action: input.action ?? 'block',
    })
  }

  async putMemberBudget(principal: Principal, memberUserId: string, input: MemberBudgetInput) {
    return this.putShorthand(principal, { kind: 'member', id: memberUserId }, input)
  }

  async putCustomerBudget(principal: Principal, input: CustomerBudgetInput) {
    return this.putShorthand(principal, { kind: 'customer', id: input.customerId }, input)
  }

  async removeLimit(principal: Principal, id: string, kind: BudgetLimit['kind']) {
    if (!(await this.store.org(principal.orgId).budgetLimits.delete(id, kind)))
      throw notFound(kind === 'window' ? 'window limit' : 'velocity limit')
    this.policies.forget(principal.orgId)
    return { id, deleted: true as const }
  }

  /** Every limit on one customer goes. */
  async removeCustomerBudget(principal: Principal, customerId: string | undefined) {
    if (customerId === undefined) throw badRequest('name the customer: ?customerId= or {"customerId": ...}')
    const org = this.store.org(principal.orgId)
    const limits = (await org.budgetLimits.list()).filter((l) => l.scopeKind === 'customer' && l.scopeId === customerId)
    if (limits.length === 0) throw notFound('customer budget')
    for (const limit of limits) await org.budgetLimits.delete(limit.id, limit.kind)
    this.policies.forget(principal.orgId)
    return { customerId, deleted: limits.length }
  }

  /** The limits on customers, each with where it stands for its customer now. */
  async customers(principal: Principal) {
    const limits = (await this.store.org(principal.orgId).budgetLimits.list()).filter((l) => l.scopeKind === 'customer')
    return (await this.withStates(principal.orgId, limits)).map(({ limit, status }) => ({
      customerId: limit.scopeId || null,
      ...view(limit),
      ...status,
    }))
  }

  async putWindowSettings(principal: Principal, input: WindowSettingsInput) {
    if (input.timezone !== undefined && !isTimezone(input.timezone))
      throw badRequest(`timezone ${JSON.stringify(input.timezone)} is not an IANA time zone (such as UTC or Europe/Paris)`)
    const settings = await this.store.org(principal.orgId).settings.update({
      ...(input.timezone !== undefined ? { budgetTimezone: input.timezone } : {}),
      ...(input.weekStart !== undefined ? { budgetWeekStart: input.weekStart } : {}),
      ...(input.monthStartDay !== undefined ? { budgetMonthStartDay: input.monthStartDay } : {}),
    })
    this.policies.forget(principal.orgId)
    return windowSettingsOf(settings)
  }

  async putAlertConfig(principal: Principal, input: AlertConfigInput) {
    const thresholds = [...input.thresholds].sort((a, b) => a - b)
    const channels = input.channels ?? ['webhook']
    const settings = await this.store
      .org(principal.orgId)
      .settings.update({ alertThresholds: thresholds, alertChannels: channels })
    this.policies.forget(principal.orgId)
    return alertConfigOf(settings)
  }

  async removeAlertConfig(principal: Principal) {
    const settings = await this.store.org(principal.orgId).settings.update({ alertThresholds: null, alertChannels: null })
    this.policies.forget(principal.orgId)
    return alertConfigOf(settings)
  }

  /** A mapping for the same `fromModel` is replaced: one model is downgraded to one other. */
  async putDowngradeMapping(principal: Principal, input: DowngradeMappingInput) {
    if (input.fromModel === input.toModel) throw badRequest('toModel must differ from fromModel')
    const org = this.store.org(principal.orgId)
    const existing = await org.downgradeMappings.findByFrom(input.fromModel)
    let mapping: DowngradeMapping
    if (existing) {
      mapping = (await org.downgradeMappings.update(existing.id, {
        toModel: input.toModel,
        atPercent: input.atPercent ?? null,
      })) as DowngradeMapping
    } else {
      mapping = {
        id: crypto.randomUUID(),
        orgId: principal.orgId,
        fromModel: input.fromModel,
        toModel: input.toModel,
        atPercent: input.atPercent ?? null,
        createdAt: new Date(this.now()),
      }
      await org.downgradeMappings.create(mapping)
    }
    this.policies.forget(principal.orgId)
    return mappingView(mapping)
  }

  async removeDowngradeMapping(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).downgradeMappings.delete(id))) throw notFound('downgrade mapping')
    this.policies.forget(principal.orgId)
    return { id, deleted: true as const }
  }

  /** Every limit with where it stands now. */
  async summary(principal: Principal) {
    const limits = await this.store.org(principal.orgId).budgetLimits.list()
    return (await this.withStates(principal.orgId, limits)).map(({ limit, status }) => ({ ...view(limit), ...status }))
  }

  /** What the limits follow: the calendar, the alerts, the downgrades (the spec has no read of them). */
  async settings(principal: Principal) {
    const org = this.store.org(principal.orgId)
    const [mappings, settings] = await Promise.all([org.downgradeMappings.list(), org.settings.get()])
    return {
      windowSettings: windowSettingsOf(settings),
      alertConfig: alertConfigOf(settings),
      downgradeMappings: mappings.map(mappingView),
    }
  }

  /** A test or manual notice, sent as `budget.threshold_crossed` with `manual: true` on the alert channels. */
  async notify(principal: Principal, input: NotifyInput) {
    const limit = input.limitId ? await this.limit(principal, input.limitId) : undefined
    const { id, deliveries } = await this.send(principal, 'notify', 'budget.threshold_crossed', {
      limit,
      message: input.message ?? 'a test notice from gw: budget alerts reach this channel',
    })
    return { id, deliveries }
  }

  /** A breach someone records by hand: logged with the automatic ones and sent as `budget.breached`. */
  async recordBreach(principal: Principal, input: BreachInput) {
    const limit = input.limitId ? await this.limit(principal, input.limitId) : undefined
    const scope = input.scope ? await this.checkedScope(principal, input.scope) : undefined
    const metric = limit?.metric ?? 'usd'
    const sent = await this.send(principal, 'manual', 'budget.breached', {
      limit,
      scope,
      message: input.message ?? 'a breach recorded by hand',
      spent: input.spent === undefined ? undefined : storedAmount(metric, input.spent),
    })
    return noticeView(sent.notice)
  }

  async breaches(principal: Principal, query: BreachesPage) {
    const limit = query.limit ?? BREACHES_PAGE.defaultLimit
    const rows = await this.store
      .org(principal.orgId)
      .budgetNotices.breaches({ limit: limit + 1, before: query.cursor ? decodeCursor(query.cursor) : undefined })
    const { page, nextCursor } = keysetPage(rows, limit)
    return { breaches: page.map(noticeView), nextCursor }
  }

  private async send(
    principal: Principal,
    kind: 'notify' | 'manual',
    event: 'budget.threshold_crossed' | 'budget.breached',
    about: { limit?: BudgetLimit; scope?: Pick<BudgetLimit, 'scopeKind' | 'scopeId'>; message: string; spent?: number },
  ) {
    const { limit } = about
    const policy = await this.policies.of(principal.orgId)
    const notice: BudgetNotice = {
      // Time-ordered: the breach log lists notices newest first, and two may share a millisecond.
      id: orderedId(),
      orgId: principal.orgId,
      kind,
      limitId: limit?.id ?? null,
      scopeKind: limit?.scopeKind ?? about.scope?.scopeKind ?? null,
      scopeId: limit?.scopeId ?? about.scope?.scopeId ?? null,
      metric: limit?.metric ?? (about.spent !== undefined ? 'usd' : null),
      windowStart: null,
      threshold: null,
      spent: about.spent ?? null,
      amount: limit?.amount ?? null,
      message: about.message,
      createdBy: principal.actorId,
      createdAt: new Date(this.now()),
    }
    const deliveries = await this.store.transaction(async (tx) => {
      await tx.org(principal.orgId).budgetNotices.add(notice)
      const rows = await budgetDeliveries(tx, notice, event, eventData(notice, limit?.action ?? null), policy.alerts.channels)
      await tx.deliveries.enqueue(rows)
      return rows.length
    })
    return { id: notice.id, deliveries, notice }
  }

  private async limit(principal: Principal, id: string): Promise<BudgetLimit> {
    const limit = await this.store.org(principal.orgId).budgetLimits.get(id)
    if (!limit) throw notFound('limit')
    return limit
  }

  private async putShorthand(principal: Principal, scopeInput: Scope, input: MemberBudgetInput) {
    const scope = await this.checkedScope(principal, scopeInput)
    const metric = input.metric ?? 'usd'
    const fields = {
      kind: 'window' as const,
      ...scope,
      metric,
      amount: storedAmount(metric, input.limit),
      ...periodOf(input.window ?? 'month'),
      action: input.action ?? 'block',
    }
    const existing = await this.store.org(principal.orgId).budgetLimits.sameAs(fields)
    return this.save(principal, existing?.id, fields)
  }

  /**
   * Creates a limit, or changes the one named; two limits alike in all but their amount and action are
   * one too many, and a window longer than the organisation keeps its request records could not be counted.
   */
  private async save(
    principal: Principal,
    id: string | undefined,
    fields: Omit<BudgetLimit, 'id' | 'orgId' | 'createdAt' | 'updatedAt'>,
  ) {
    await this.retention.checkWindow(principal.orgId, fields)
    const org = this.store.org(principal.orgId)
    const twin = await org.budgetLimits.sameAs(fields)
    if (twin && twin.id !== id)
      throw conflict(`the limit ${twin.id} already covers this scope, metric and window: change it by its id instead`)
    const now = new Date(this.now())
    let saved: BudgetLimit
    if (id !== undefined) {
      const current = await org.budgetLimits.get(id)
      if (!current || current.kind !== fields.kind) throw notFound(`${fields.kind} limit`)
      saved = (await org.budgetLimits.update(id, { ...fields, updatedAt: now })) as BudgetLimit
    } else {
      saved = { id: crypto.randomUUID(), orgId: principal.orgId, ...fields, createdAt: now, updatedAt: now }
      await org.budgetLimits.create(saved)
    }
    this.policies.forget(principal.orgId)
    return view(saved)
  }

  /** The scope as stored, once what it names is known to be the organisation's. */
  private async checkedScope(principal: Principal, scope: Scope): Promise<Pick<BudgetLimit, 'scopeKind' | 'scopeId'>> {
    const org = this.store.org(principal.orgId)
    const id = scope.id
    if (scope.kind === 'org') {
      if (id !== undefined) throw badRequest('an org limit covers the whole organization: leave scope.id out')
      return { scopeKind: 'org', scopeId: '' }
    }
    if (id !== undefined) {
      if (scope.kind === 'team' && !(await org.teams.get(id))) throw notFound('team')
      if (scope.kind === 'member' && !(await org.memberships.get(id))) throw notFound('member')
      if (scope.kind === 'key' && !(await org.apiKeys.get(id))) throw notFound('API key')
      if (scope.kind === 'provider' && !(PROVIDER_NAMES as readonly string[]).includes(id))
        throw badRequest(`scope.id of a provider limit must be one of ${PROVIDER_NAMES.join(', ')}`)
    }
    return { scopeKind: scope.kind, scopeId: id ?? '' }
  }

  /** Each limit with its spent, held and remaining amounts now; a limit on every value of a kind has no one figure. */
  private async withStates(orgId: string, limits: readonly BudgetLimit[]) {
    const single = limits.filter((l) => l.scopeKind === 'org' || l.scopeId !== '')
    const states = new Map<string, LimitState>(
      (
        await this.enforcer.states(
          orgId,
          single.map((limit) => ({ limit, value: limit.scopeId })),
        )
      ).map((s) => [s.applied.limit.id, s]),
    )
    const policy = await this.policies.of(orgId)
    const warnAt = policy.alerts.thresholds[0] ?? WARNING_PERCENT
    return limits.map((limit) => {
      const found = states.get(limit.id)
      if (!found)
        return {
          limit,
          status: {
            spent: null,
            reserved: null,
            remaining: null,
            windowStart: null,
            windowEnd: null,
            status: 'per_value' as const,
          },
        }
      const { state, applied } = found
      const used = state.spent + state.reserved
      return {
        limit,
        status: {
          spent: inUnit(limit.metric, state.spent),
          reserved: inUnit(limit.metric, state.reserved),
          remaining: inUnit(limit.metric, Math.max(0, limit.amount - used)),
          windowStart: new Date(applied.window.start).toISOString(),
          windowEnd: new Date(applied.window.end).toISOString(),
          status:
            state.spent >= limit.amount
              ? ('exceeded' as const)
              : used * 100 >= warnAt * limit.amount
                ? ('warning' as const)
                : ('ok' as const),
        },
      }
    })
  }
}
