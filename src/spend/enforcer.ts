import { ApiError } from '../errors'
import type { Logger } from '../log'
import { nanoToUsd } from '../money/cost'
import type { BudgetLimit, Metric } from '../store/repositories/budgets'
import type { SpendScope } from '../store/repositories/requests'
import type { Store } from '../store/store'
import type { ValueOrPromise } from '../util/value-or-promise'
import type { CounterSpec, CounterState, SpendStore } from './counters'
import type { BudgetNotices } from './notices'
import type { Downgrade, SpendPolicies, SpendPolicy } from './policy'
import { type Window, windowAt } from './windows'

/**
 * A sliding (velocity) window is counted in this many slots: spend stays counted from one window to at
 * most one slot (a twentieth of the window) longer, never shorter, so the limit errs on the safe side.
 */
export const VELOCITY_SLOTS = 20

/**
 * How long a reservation holds budget when its call never settles (the instance died): longer than
 * almost any call, short enough that a crash does not hold a budget for long. A stream that runs longer
 * stops being held from then on; what it used is still counted when it ends.
 */
export const HOLD_TTL_MS = 15 * 60_000

/** How many of one limit's counters (one per scope value) are kept for reuse before they are all made anew. */
const COUNTERS_PER_LIMIT = 10_000

/** An alert-only limit never refuses: it counts with no ceiling and only tells. */
const NO_CEILING = Number.MAX_SAFE_INTEGER

/** What the spend controls know of a call before it is sent. */
export interface SpendCall {
  requestId: string
  orgId: string
  apiKeyId?: string
  memberId?: string
  customerId?: string
  model: string
  provider: string
  /** The most the call can use, per metric; absent where gw cannot bound it (no price known). */
  worst: { usd?: number; tokens?: number }
}

/** One limit's counter for this call: the limit, the scope value it counts, and its window. */
export interface AppliedLimit {
  limit: BudgetLimit
  value: string
  spec: CounterSpec
  /** A calendar or fixed window; for a sliding one, the span ending when the counter was made. */
  window: Window
}

/** What a call holds: released or settled exactly once, when it ends. */
export interface Hold {
  id: string
  orgId: string
  applied: AppliedLimit[]
  /** The applied limits' counters, in the same order. */
  specs: CounterSpec[]
  amounts: number[]
  alerts: SpendPolicy['alerts']
}

export type Reservation = { kind: 'held'; hold?: Hold } | { kind: 'downgrade'; toModel: string; limit: BudgetLimit }

/** What a finished call used, per metric. */
export type Used = Record<Metric, number>

export interface LimitState {
  applied: AppliedLimit
  state: CounterState
}

/** `{orgId}` is the hash tag: every counter of an organisation is in one cluster slot, for one script. */
const PLAIN = /^[\w.:@-]*$/
const counterKey = (limit: BudgetLimit, value: string) =>
  `gw:sp:{${limit.orgId}}:${limit.id}:${limit.period}${limit.periodSeconds}:${PLAIN.test(value) ? value : encodeURIComponent(value)}`

export function counterOf(limit: BudgetLimit, value: string, now: number, policy: Pick<SpendPolicy, 'windows'>): AppliedLimit {
  const ceiling = limit.action === 'alert' ? NO_CEILING : limit.amount
  const key = counterKey(limit, value)
  if (limit.kind === 'velocity') {
    const windowMs = limit.periodSeconds * 1000
    const slotMs = Math.ceil(windowMs / VELOCITY_SLOTS)
    const slotStart = Math.floor(now / slotMs) * slotMs
    const countFrom = slotStart - VELOCITY_SLOTS * slotMs
    return {
      limit,
      value,
      window: { start: now - windowMs, end: now },
      spec: {
        key,
        limit: ceiling,
        slots: VELOCITY_SLOTS + 1,
        slotMs,
        slotStart,
        countFrom,
        seedMark: 'sliding',
        ttlMs: (VELOCITY_SLOTS + 1) * slotMs + HOLD_TTL_MS,
      },
    }
  }
  const window = windowAt(limit.period, limit.periodSeconds, now, policy.windows)
  return {
    limit,
    value,
    window,
    spec: {
      key,
      limit: ceiling,
      slots: 1,
      slotMs: window.end - window.start,
      slotStart: window.start,
      countFrom: window.start,
      seedMark: String(window.start),
      ttlMs: window.end - now + HOLD_TTL_MS,
    },
  }
}

/** An amount as the API shows it: USD for `usd` (stored in nano-USD), a count otherwise. */
export const inUnit = (metric: string | null, amount: number): number => (metric === 'usd' ? nanoToUsd(amount) : amount)

/** How an amount of a metric reads in a message. */
export function formatAmount(metric: Metric, amount: number): string {
  if (metric === 'usd')
    return `$${inUnit(metric, amount)
      .toFixed(6)
      .replace(/\.?0+$/, '')}`
  return `${amount} ${metric}`
}

export const describeLimit = (limit: BudgetLimit, value: string): string => {
  const scope = limit.scopeKind === 'org' ? 'the organization' : `${limit.scopeKind} ${JSON.stringify(value)}`
  const window =
    limit.kind === 'velocity'
      ? `per sliding ${limit.periodSeconds} s`
      : limit.period === 'seconds'
        ? `per ${limit.periodSeconds} s`
        : `per ${limit.period}`
  return `the ${limit.kind === 'velocity' ? 'velocity ' : ''}limit ${limit.id} of ${formatAmount(limit.metric, limit.amount)} ${window} on ${scope}`
}

/** When enough frees up for a retry: holds settle within a call, a window resets, a sliding window's oldest spend ages out. */
function retryAfterSeconds(applied: AppliedLimit, state: CounterState, amount: number, now: number): number {
  const { limit, spec } = applied
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))
  if (amount <= limit.amount && state.spent + amount <= limit.amount) return 1
  if (limit.kind === 'velocity') {
    return state.oldestSlot === undefined || amount > limit.amount
      ? seconds(limit.periodSeconds * 1000)
      : seconds(state.oldestSlot + spec.slots * spec.slotMs - now)
  }
  return seconds(applied.window.end - now)
}

/**
 * Reserve, then settle: before a call is sent, its worst case is held against every limit that applies
 * to it, all or nothing, in one step of the counter store; when it ends, the hold is replaced by what
 * it used. Counters are derived from the request log: a counter the store does not know for its window
 * is counted in from the log before anything is held against it.
 */
export class BudgetEnforcer {
  private readonly seeding = new Map<string, Promise<void>>()
  private readonly counters = new WeakMap<BudgetLimit, Map<string, AppliedLimit>>()
  /** Makes each hold's id unique within this instance; the request id makes it unique across them. */
  private holds = 0

  constructor(
    private readonly deps: {
      store: Pick<Store, 'requests' | 'mcpToolCalls'>
      counters: SpendStore
      policies: SpendPolicies
      notices: BudgetNotices
      log: Logger
      now?: () => number
    },
  ) {}

  private get now(): number {
    return (this.deps.now ?? Date.now)()
  }

  /**
   * Holds the call's worst case against its limits. A limit with `downgrade` that would refuse, or is
   * at its mapping's percentage, answers the model to serve instead (nothing is held then); any other
   * refusal throws `budget_exceeded`, and a call that cannot be bounded where a limit must hold it
   * throws `price_unknown`.
   */
  reserve(call: SpendCall, options: { mayDowngrade: boolean }): ValueOrPromise<Reservation> {
    const cached = this.deps.policies.cached(call.orgId)
    // An organisation without limits holds nothing, and is answered at once.
    if (cached && cached.limits.length === 0) return { kind: 'held' }
    return this.reserveAgainst(call, options, cached)
  }

  private async reserveAgainst(
    call: SpendCall,
    options: { mayDowngrade: boolean },
    cached: SpendPolicy | undefined,
  ): Promise<Reservation> {
    const policy = cached ?? (await this.deps.policies.of(call.orgId))
    if (policy.limits.length === 0) return { kind: 'held' }
    const now = this.now
    const teams = policy.onTeams && call.memberId ? await this.deps.policies.teamsOf(call.orgId, call.memberId) : []
    const applied = this.applicable(call, policy, teams, now)
    if (applied.length === 0) return { kind: 'held' }
    const amounts: number[] = []
    const specs: CounterSpec[] = []
    for (const a of applied) {
      amounts.push(amountOf(a.limit, call))
      specs.push(a.spec)
    }
    this.holds = (this.holds + 1) % Number.MAX_SAFE_INTEGER
    const hold: Hold = {
      id: `${call.requestId}:${this.holds}`,
      orgId: call.orgId,
      applied,
      specs,
      amounts,
      alerts: policy.alerts,
    }
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.deps.counters.reserve(hold.id, now + HOLD_TTL_MS, specs, amounts, now)
      if (outcome.kind === 'unseeded') {
        // Seeding marks the counter for its window, so a second pass finds it seeded; a third means the
        // store forgets what it is told, and refusing is safer than looping.
        if (attempt >= 2) throw new Error('spend counters stay unseeded after seeding')
        await Promise.all(outcome.indexes.map((i) => this.seed(applied[i] as AppliedLimit, now)))
        continue
      }
      if (outcome.kind === 'refused') {
        const refusing = applied[outcome.index] as AppliedLimit
        const downgrade = options.mayDowngrade && refusing.limit.action === 'downgrade' && downgradeFor(policy, call.model)
        if (downgrade) return this.downgrade(call, refusing, downgrade)
        const amount = amounts[outcome.index] as number
        await this.deps.notices.refused(call, refusing, outcome.before[outcome.index] as CounterState, amount, policy.alerts)
        throw budgetExceeded(refusing, outcome.before[outcome.index] as CounterState, amount, now)
      }
      if (options.mayDowngrade && policy.downgrades.length > 0) {
        const atPercent = applied.findIndex((a, i) => {
          const mapping = a.limit.action === 'downgrade' && downgradeFor(policy, call.model)
          const state = outcome.before[i] as CounterState
          return (
            mapping && mapping.atPercent !== null && (state.spent + state.reserved) * 100 >= mapping.atPercent * a.limit.amount
          )
        })
        if (atPercent >= 0) {
          await this.release(hold)
          const reached = applied[atPercent] as AppliedLimit
          return this.downgrade(call, reached, downgradeFor(policy, call.model) as Downgrade)
        }
      }
      return { kind: 'held', hold }
    }
  }

  /** Replaces the hold by what the call used, and tells of any threshold the spend has now reached. */
  async settle(hold: Hold, used: Used): Promise<void> {
    const amounts = hold.applied.map((a) => used[a.limit.metric])
    const spent = await this.deps.counters.settle(hold.id, hold.specs, amounts, this.now)
    this.deps.notices.reached(hold, spent)
  }

  release(hold: Hold): Promise<void> {
    return this.settle(hold, { usd: 0, tokens: 0, requests: 0 })
  }

  /** Every limit's counter for a scope value right now (the summary), seeded from the log when new. */
  async states(orgId: string, limits: ReadonlyArray<{ limit: BudgetLimit; value: string }>): Promise<LimitState[]> {
    if (limits.length === 0) return []
    const policy = await this.deps.policies.of(orgId)
    const now = this.now
    const applied = limits.map(({ limit, value }) => counterOf(limit, value, now, policy))
    let states = await this.deps.counters.read(
      applied.map((a) => a.spec),
      now,
    )
    const unseeded = states.flatMap((s, i) => (s.seeded ? [] : [i]))
    if (unseeded.length > 0) {
      await Promise.all(unseeded.map((i) => this.seed(applied[i] as AppliedLimit, now)))
      states = await this.deps.counters.read(
        applied.map((a) => a.spec),
        now,
      )
    }
    return applied.map((a, i) => ({ applied: a, state: states[i] as CounterState }))
  }

  private async downgrade(call: SpendCall, applied: AppliedLimit, mapping: Downgrade): Promise<Reservation> {
    await this.deps.notices.downgraded(call, applied)
    return { kind: 'downgrade', toModel: mapping.toModel, limit: applied.limit }
  }

  private applicable(call: SpendCall, policy: SpendPolicy, teams: readonly string[], now: number): AppliedLimit[] {
    const applied: AppliedLimit[] = []
    for (const limit of policy.limits) {
      for (const value of scopeValues(limit, call, teams))
        if (limit.scopeId === '' || limit.scopeId === value) applied.push(this.counter(limit, value, now, policy))
    }
    return applied
  }

  /**
   * A limit's counter for a value, made once and used by every call until its slot (a fixed window, or
   * a sliding window's current slot) ends. Keyed by the limit object itself: the policy cache hands out
   * new objects when it reads the limits again, and the counters made from the old ones go with them.
   */
  private counter(limit: BudgetLimit, value: string, now: number, policy: SpendPolicy): AppliedLimit {
    let byValue = this.counters.get(limit)
    if (!byValue) {
      byValue = new Map()
      this.counters.set(limit, byValue)
    }
    const known = byValue.get(value)
    if (known && known.spec.slotStart <= now && now < known.spec.slotStart + known.spec.slotMs) return known
    const made = counterOf(limit, value, now, policy)
    // Per-value limits meet many values (every customer): the oldest go when there are too many.
    if (byValue.size >= COUNTERS_PER_LIMIT) byValue.clear()
    byValue.set(value, made)
    return made
  }

  /** Counts the log's spend of the counter's window in; concurrent calls on one new counter read the log once. */
  private seed(applied: AppliedLimit, now: number): Promise<void> {
    const flight = `${applied.spec.key}|${applied.spec.seedMark}`
    let pending = this.seeding.get(flight)
    if (!pending) {
      pending = this.logged(applied, now)
        .then((logged) => this.deps.counters.seed(applied.spec, logged, now))
        .finally(() => this.seeding.delete(flight))
      this.seeding.set(flight, pending)
    }
    return pending
  }

  private async logged(applied: AppliedLimit, now: number): Promise<number> {
    const { limit, value, spec } = applied
    const start = new Date(spec.countFrom)
    // A sliding window reaches to now; a call settling later is counted by its settlement.
    const end = new Date(limit.kind === 'velocity' ? now + HOLD_TTL_MS : applied.window.end)
    const scope: SpendScope = { orgId: limit.orgId, start, end, match: {} }
    switch (limit.scopeKind) {
      case 'org':
        break
      case 'key':
        scope.match.apiKeyId = value
        break
      case 'member':
        scope.match.memberId = value
        break
      case 'team':
        scope.memberIds = await this.deps.policies.membersOf(limit.orgId, value)
        break
      case 'customer':
        scope.match.customerId = value
        break
      case 'model':
        scope.match.model = value
        break
      case 'provider':
        scope.match.provider = value
        break
    }
    // Tool calls relayed by gw's MCP endpoint are held against the same budgets as model calls.
    const [models, tools] = await Promise.all([
      this.deps.store.requests.spendOf(scope, limit.metric),
      this.deps.store.mcpToolCalls.spendOf(scope, limit.metric),
    ])
    return models + tools
  }
}

function scopeValues(limit: BudgetLimit, call: SpendCall, teams: readonly string[]): readonly string[] {
  switch (limit.scopeKind) {
    case 'org':
      return ['']
    case 'key':
      return call.apiKeyId ? [call.apiKeyId] : []
    case 'member':
      return call.memberId ? [call.memberId] : []
    case 'team':
      return teams
    case 'customer':
      return call.customerId ? [call.customerId] : []
    case 'model':
      return [call.model]
    case 'provider':
      return [call.provider]
  }
}

function amountOf(limit: BudgetLimit, call: SpendCall): number {
  if (limit.metric === 'requests') return 1
  const worst = call.worst[limit.metric]
  if (worst !== undefined) return worst
  // An alert-only limit cannot be overshot: the call goes, and counts what it used when it ends.
  if (limit.action === 'alert') return 0
  throw new ApiError(
    'price_unknown',
    limit.metric === 'usd'
      ? `gw has no price for ${call.provider} model ${call.model}, so it cannot hold what the call may cost against the budget ${limit.id}; set one with PUT /v1/model-prices`
      : `gw cannot bound the tokens of a call to ${call.provider} model ${call.model} for the budget ${limit.id}: set max_tokens on the call, or the model's maxOutputTokens with PUT /v1/model-prices`,
    { details: { limitId: limit.id } },
  )
}

const downgradeFor = (policy: SpendPolicy, model: string): Downgrade | undefined =>
  policy.downgrades.find((d) => d.matches(model) && d.toModel !== model)

function budgetExceeded(applied: AppliedLimit, state: CounterState, amount: number, now: number): ApiError {
  const { limit, value } = applied
  const retryAfter = retryAfterSeconds(applied, state, amount, now)
  const left = Math.max(0, limit.amount - state.spent - state.reserved)
  return new ApiError(
    'budget_exceeded',
    `budget exceeded: ${describeLimit(limit, value)} has ${formatAmount(limit.metric, left)} left, and this call may use up to ${formatAmount(limit.metric, amount)}; retry in ${retryAfter} s`,
    { details: { limitId: limit.id, scope: { kind: limit.scopeKind, id: value || null } }, retryAfterSeconds: retryAfter },
  )
}
