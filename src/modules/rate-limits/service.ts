import type { Principal } from '../../auth/principal'
import { requireTier } from '../../auth/tiers'
import { notFound } from '../../errors'
import type { RuleSource } from '../../limits/limiter'
import { DEFAULT_WINDOW_SECONDS, formatPolicy, type Policy, validatePolicy } from '../../limits/policy'
import type { RateLimitRule } from '../../store/repositories/rate-limit-rules'
import type { Store } from '../../store/store'
import { TtlCache } from '../../util/ttl-cache'
import type { ValueOrPromise } from '../../util/value-or-promise'
import type { RuleInput } from './model'

/**
 * The gateway reads rules this fresh: a change is in force on every instance within a second, with no
 * database read per request in between.
 */
const RULE_CACHE_MS = 1_000

const toPolicy = (rule: Pick<RateLimitRule, 'quota' | 'windowSeconds' | 'unit' | 'segment' | 'property'>): Policy => ({
  quota: rule.quota,
  windowSeconds: rule.windowSeconds,
  unit: rule.unit,
  segment: rule.segment,
  ...(rule.property ? { property: rule.property } : {}),
})

const view = (rule: RateLimitRule) => ({
  id: rule.id,
  quota: rule.quota,
  windowSeconds: rule.windowSeconds,
  unit: rule.unit,
  segment: rule.segment,
  property: rule.property,
  policy: formatPolicy(toPolicy(rule)),
  createdAt: rule.createdAt.toISOString(),
  updatedAt: rule.updatedAt.toISOString(),
})

export class RateLimitRulesService implements RuleSource {
  private readonly cache: TtlCache<string, readonly Policy[] | Promise<readonly Policy[]>>

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new TtlCache(100_000, RULE_CACHE_MS, now)
  }

  /** At once when held: the limiter reads them on every call without a `Gw-RateLimit-Policy` header. */
  rulesFor(orgId: string): ValueOrPromise<readonly Policy[]> {
    return this.cache.held(orgId, async () => (await this.store.org(orgId).rateLimitRules.list()).map(toPolicy))
  }

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).rateLimitRules.list()).map(view)
  }

  async create(principal: Principal, input: RuleInput) {
    requireTier(principal.tier, 'growth', 'Rate-limit rules')
    const policy = this.validate(input)
    const now = new Date(this.now())
    const rule: RateLimitRule = {
      id: crypto.randomUUID(),
      orgId: principal.orgId,
      ...this.columns(policy),
      createdAt: now,
      updatedAt: now,
    }
    await this.store.org(principal.orgId).rateLimitRules.create(rule)
    this.cache.delete(principal.orgId)
    return view(rule)
  }

  async replace(principal: Principal, id: string, input: RuleInput) {
    requireTier(principal.tier, 'growth', 'Rate-limit rules')
    const policy = this.validate(input)
    const updated = await this.store.org(principal.orgId).rateLimitRules.update(id, {
      ...this.columns(policy),
      updatedAt: new Date(this.now()),
    })
    if (!updated) throw notFound('rate-limit rule')
    this.cache.delete(principal.orgId)
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    requireTier(principal.tier, 'growth', 'Rate-limit rules')
    if (!(await this.store.org(principal.orgId).rateLimitRules.delete(id))) throw notFound('rate-limit rule')
    this.cache.delete(principal.orgId)
    return { id, deleted: true as const }
  }

  private validate(input: RuleInput): Policy {
    return validatePolicy(
      {
        quota: input.quota,
        windowSeconds: input.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
        unit: (input.unit ?? 'request') as Policy['unit'],
        segment: (input.segment ?? 'global') as Policy['segment'],
        property: input.property,
      },
      'invalid rate-limit rule',
    )
  }

  private columns(policy: Policy) {
    return {
      quota: policy.quota,
      windowSeconds: policy.windowSeconds,
      unit: policy.unit,
      segment: policy.segment,
      property: policy.property ?? null,
    }
  }
}
