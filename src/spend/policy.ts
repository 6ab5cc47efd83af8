import type { BudgetLimit, DowngradeMapping } from '../store/repositories/budgets'
import type { Store } from '../store/store'
import { globMatches } from '../util/glob'
import { TtlCache } from '../util/ttl-cache'
import { type WindowSettings, windowSettingsOf } from './windows'

/** A downgrade mapping, with the test of its glob. */
export interface Downgrade extends DowngradeMapping {
  matches(model: string): boolean
}

export interface AlertConfig {
  /** Percentages of a limit, ascending. */
  thresholds: readonly number[]
  channels: readonly string[]
  /** The thresholds below 100 and then 100, the breach: what a settlement looks at. */
  levels: readonly number[]
}

const levelsOf = (thresholds: readonly number[]) => [...thresholds.filter((t) => t < 100), 100]

/** What the spend controls need to know about an organisation on every call, read together and cached. */
export interface SpendPolicy {
  limits: readonly BudgetLimit[]
  downgrades: readonly Downgrade[]
  windows: WindowSettings
  alerts: AlertConfig
  /** Whether any limit is on teams: only then are a member's teams looked up. */
  onTeams: boolean
}

/** Without an alert configuration: breaches are logged and sent to the webhooks that subscribe to them. */
export const DEFAULT_ALERTS: AlertConfig = { thresholds: [], channels: ['webhook'], levels: [100] }

const alertConfig = (thresholds: readonly number[], channels: readonly string[]): AlertConfig => ({
  thresholds,
  channels,
  levels: levelsOf(thresholds),
})

/**
 * Policies are read this fresh: a change is in force on this instance at once (the budgets service
 * drops its entry) and on every other within a second, with no database read per call in between.
 */
const POLICY_CACHE_MS = 1_000
/** A team's membership changes rarely, and a member's teams are looked up on each call on a team limit. */
const TEAMS_CACHE_MS = 5_000

export class SpendPolicies {
  private readonly policies: TtlCache<string, SpendPolicy>
  private readonly teams: TtlCache<string, readonly string[]>
  private readonly members: TtlCache<string, readonly string[]>
  private readonly loading = new Map<string, Promise<SpendPolicy>>()
  /** Counts the changes made through this instance. */
  private changes = 0

  constructor(
    private readonly store: Store,
    now: () => number = Date.now,
  ) {
    this.policies = new TtlCache(100_000, POLICY_CACHE_MS, now)
    this.teams = new TtlCache(100_000, TEAMS_CACHE_MS, now)
    this.members = new TtlCache(10_000, TEAMS_CACHE_MS, now)
  }

  /** The organisation's policy when this instance has it fresh, without waiting: the usual case of a call. */
  cached(orgId: string): SpendPolicy | undefined {
    return this.policies.get(orgId)
  }

  /** Concurrent calls that find an organisation's policy lapsed wait on one read of it. */
  of(orgId: string): Promise<SpendPolicy> {
    const cached = this.policies.get(orgId)
    if (cached) return Promise.resolve(cached)
    let pending = this.loading.get(orgId)
    if (!pending) {
      pending = this.load(orgId).finally(() => this.loading.delete(orgId))
      this.loading.set(orgId, pending)
    }
    return pending
  }

  private async load(orgId: string): Promise<SpendPolicy> {
    const changes = this.changes
    const org = this.store.org(orgId)
    const [limits, mappings, settings] = await Promise.all([
      org.budgetLimits.list(),
      org.downgradeMappings.list(),
      org.settings.get(),
    ])
    const policy: SpendPolicy = {
      limits,
      // The most specific glob first: a mapping for `gpt-4o-mini` wins over one for `gpt-4o*`.
      downgrades: mappings
        .map((m) => ({ ...m, matches: (model: string) => globMatches(m.fromModel, model) }))
        .sort((a, b) => b.fromModel.replaceAll('*', '').length - a.fromModel.replaceAll('*', '').length),
      windows: windowSettingsOf(settings),
      alerts: settings.alertThresholds
        ? alertConfig(
            [...settings.alertThresholds].sort((a, b) => a - b),
            settings.alertChannels ?? [],
          )
        : DEFAULT_ALERTS,
      onTeams: limits.some((l) => l.scopeKind === 'team'),
    }
    // A read begun before a change may have seen the old limits: it serves its callers, but is not kept.
    if (changes === this.changes) this.policies.set(orgId, policy)
    return policy
  }

  forget(orgId: string): void {
    this.changes += 1
    this.policies.delete(orgId)
    this.loading.delete(orgId)
  }

  /** The teams a member is in. */
  teamsOf(orgId: string, memberId: string): Promise<readonly string[]> {
    return cachedIn(this.teams, `${orgId}:${memberId}`, async () =>
      (await this.store.org(orgId).teams.listForUser(memberId)).map((t) => t.id),
    )
  }

  /** A team's members, to count its spend in from the request log. */
  membersOf(orgId: string, teamId: string): Promise<readonly string[]> {
    return cachedIn(this.members, `${orgId}:${teamId}`, async () =>
      (await this.store.org(orgId).teams.members(teamId)).map((m) => m.userId),
    )
  }
}

async function cachedIn<V>(cache: TtlCache<string, V>, key: string, load: () => Promise<V>): Promise<V> {
  const found = cache.get(key)
  if (found !== undefined) return found
  const loaded = await load()
  cache.set(key, loaded)
  return loaded
}
