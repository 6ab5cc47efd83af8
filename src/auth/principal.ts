import type { Permission } from './permissions'
import type { KeyScopes } from './scopes'
import type { Tier } from './tiers'

/** Who is calling, resolved from the bearer credential; everything after authentication reads this. */
export interface Principal {
  kind: 'api_key' | 'session'
  orgId: string
  tier: Tier
  /** The API key id or the user id: what the audit log names as the actor. */
  actorId: string
  userId?: string
  /** The member calls are attributed to for budgets: the person of a session, or the one who created the key. */
  memberId?: string
  apiKeyId?: string
  sessionId?: string
  /** For sessions: `owner`, `admin`, `member` or a custom role id. */
  role?: string
  /** For API keys: the scopes set on the key, read (see scopes.ts). */
  keyScopes?: KeyScopes
  /** For a proxy key: the one provider key it may dispatch with. */
  boundProviderKeyId?: string
  permissions: ReadonlySet<Permission>
}

export const can = (principal: Principal, permission: Permission): boolean => principal.permissions.has(permission)

/** The member an API key's calls are made for: the person who created it, when known. */
export const keyMemberId = (key: { createdByUserId: string | null }): string | undefined => key.createdByUserId ?? undefined
