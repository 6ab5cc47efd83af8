/**
 * How long an organisation's request records are kept, and what the spend controls ask of it. The
 * request log is the truth of spend: a counter that is new (a restart, a new window, Redis lost) is
 * counted in from the records of its window, so deleting a record its window still counts would make a
 * restarted instance undercount the budget. Hence a retention never shorter than the longest budget
 * window, a budget window never longer than the retention, and a cut-off that never reaches into a
 * window being counted, whatever the operator configured.
 */
import { badRequest } from '../errors'
import type { BudgetLimit } from '../store/repositories/budgets'
import type { OrganizationSettings } from '../store/repositories/organization-settings'
import type { Store } from '../store/store'
import { counterOf } from './enforcer'
import { windowSettingsOf } from './windows'

export const DAY_MS = 86_400_000
/** The most days request records may be kept for (ten years), by the operator's bound or an organisation's own. */
export const MAX_RETENTION_DAYS = 3650

/** What of a limit decides the span of the log it counts. */
export type Windowed = Pick<BudgetLimit, 'kind' | 'period' | 'periodSeconds'>

/** The most whole days a limit's window reaches back from now: what a retention must cover for it. */
export function windowDays(limit: Windowed): number {
  switch (limit.period) {
    case 'day':
      return 1
    case 'week':
      return 7
    case 'month':
      return 31
    case 'seconds':
      return Math.max(1, Math.ceil(limit.periodSeconds / 86_400))
  }
}

/** A limit's window as people name it, for messages. */
export function windowName(limit: Windowed): string {
  if (limit.kind === 'velocity') return `sliding ${limit.periodSeconds} s`
  if (limit.period === 'seconds') return `${limit.periodSeconds} s (${windowDays(limit)} days)`
  return limit.period === 'month' ? 'month (up to 31 days)' : limit.period === 'week' ? 'week (7 days)' : 'day'
}

/** The limit whose window reaches furthest back, if there is one. */
export function longestWindow<L extends Windowed>(limits: readonly L[]): L | undefined {
  let longest: L | undefined
  for (const limit of limits) if (!longest || windowDays(limit) > windowDays(longest)) longest = limit
  return longest
}

/** What an organisation's settings say of its records. */
type RetentionSettings = Pick<
  OrganizationSettings,
  'requestRetentionDays' | 'budgetTimezone' | 'budgetWeekStart' | 'budgetMonthStartDay'
>

/** The records' retention of one organisation, as its settings answer shows it. */
export interface RetentionView {
  /** How many days records are kept; null: forever. */
  days: number | null
  /** The organisation's own setting; null: the operator's default. */
  own: number | null
  /** The operator's bound (GW_REQUEST_RETENTION_DAYS); null: none. */
  operatorDays: number | null
  /** The longest window of the organisation's budgets, in days; records are never deleted sooner. */
  budgetWindowDays: number | null
}

/** Where the retention job may cut an organisation's records, and the budget that held the cut back, if one did. */
export interface RecordCutoff {
  cutoff: Date
  /** The retention's own days. */
  days: number
  /** Set when a budget's window reaches further back than the retention: records are kept for it. */
  heldBy?: BudgetLimit
}

/** The operator's bound and each organisation's own days, and how budgets and retention hold each other in. */
export class RecordRetention {
  constructor(
    private readonly store: Store,
    /** GW_REQUEST_RETENTION_DAYS; undefined: records are kept until an organisation says otherwise. */
    readonly operatorDays: number | undefined,
  ) {}

  /** The days an organisation keeps its records by its settings: its own, never beyond the operator's; null: forever. */
  daysOf(settings: Pick<OrganizationSettings, 'requestRetentionDays'>): number | null {
    const own = settings.requestRetentionDays
    if (own === null) return this.operatorDays ?? null
    return this.operatorDays === undefined ? own : Math.min(own, this.operatorDays)
  }

  view(settings: Pick<OrganizationSettings, 'requestRetentionDays'>, limits: readonly Windowed[]): RetentionView {
    const days = this.daysOf(settings)
    const longest = longestWindow(limits)
    const budgetWindowDays = longest ? windowDays(longest) : null
    return {
      days: days === null ? null : Math.max(days, budgetWindowDays ?? 0),
      own: settings.requestRetentionDays,
      operatorDays: this.operatorDays ?? null,
      budgetWindowDays,
    }
  }

  /**
   * Refuses days an organisation may not keep its records for: more than the operator allows, or fewer
   * than a budget of it counts. Answers nothing; throws a 400 that says which bound and why.
   */
  async checkDays(orgId: string, days: number): Promise<void> {
    if (this.operatorDays !== undefined && days > this.operatorDays)
      throw badRequest(
        `days must be at most ${this.operatorDays}: this gw keeps request records at most ${this.operatorDays} days (its operator's GW_REQUEST_RETENTION_DAYS)`,
      )
    const longest = longestWindow(await this.store.org(orgId).budgetLimits.list())
    if (longest && windowDays(longest) > days)
      throw badRequest(
        `days must be at least ${windowDays(longest)}: the budget ${longest.id} (${scopeName(longest)}) counts a ${windowName(longest)} window from the request records; shorten or delete it first`,
      )
  }

  /** Refuses a budget window longer than the organisation keeps its records: the budget could not count it. */
  async checkWindow(orgId: string, limit: Windowed): Promise<void> {
    const days = this.daysOf(await this.store.org(orgId).settings.get())
    if (days !== null && windowDays(limit) > days)
      throw badRequest(
        `the ${windowName(limit)} window is longer than the ${days} days this organization keeps its request records, which budgets count from: choose a shorter window, or keep records longer (POST /v1/organization/request-retention-config)`,
      )
  }

  /**
   * The instant before which an organisation's records may go now, or undefined when they are kept
   * forever. Never later than the start of what any of its budgets' counters read from the log, even
   * when the operator's bound is shorter than a budget's window (a budget made before the bound was).
   */
  cutoff(settings: RetentionSettings, limits: readonly BudgetLimit[], now: number): RecordCutoff | undefined {
    const days = this.daysOf(settings)
    if (days === null) return undefined
    let cutoff = now - days * DAY_MS
    let heldBy: BudgetLimit | undefined
    const windows = windowSettingsOf(settings)
    for (const limit of limits) {
      const countedFrom = counterOf(limit, limit.scopeId, now, { windows }).spec.countFrom
      if (countedFrom < cutoff) {
        cutoff = countedFrom
        heldBy = limit
      }
    }
    return { cutoff: new Date(cutoff), days, heldBy }
  }
}

const scopeName = (limit: Pick<BudgetLimit, 'scopeKind' | 'scopeId'>) =>
  limit.scopeKind === 'org' ? 'the organization' : `${limit.scopeKind} ${limit.scopeId || 'each'}`
