import { ApiError } from '../errors'

/** The plans an organisation can be on, lowest first: what a feature needs is written as one of them. */
export const TIERS = ['free', 'pro', 'growth', 'enterprise'] as const
export type Tier = (typeof TIERS)[number]

const RANK: Record<Tier, number> = { free: 0, pro: 1, growth: 2, enterprise: 3 }

export const tierAtLeast = (tier: Tier, needed: Tier): boolean => RANK[tier] >= RANK[needed]

/** The one tier gate: 403 `tier_required`, naming the tier needed and the one the organisation has. */
export function requireTier(tier: Tier, needed: Tier, feature: string): void {
  if (!tierAtLeast(tier, needed)) {
    throw new ApiError('tier_required', `${feature} needs the ${needed} tier or higher; this organization is on ${tier}`, {
      details: { requiredTier: needed, currentTier: tier },
    })
  }
}
