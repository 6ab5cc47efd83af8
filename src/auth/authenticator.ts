import { unauthorized } from '../errors'
import type { Organization } from '../store/repositories/organizations'
import type { Store } from '../store/store'
import { TtlCache } from '../util/ttl-cache'
import type { ValueOrPromise } from '../util/value-or-promise'
import { type CredentialHasher, type ParsedCredential, parseCredential } from './credentials'
import type { InvalidationBus } from './invalidation'
import {
  BUILT_IN_ROLE_PERMISSIONS,
  customRolePermissions,
  isBuiltInRole,
  MEMBER_PERMISSIONS,
  type Permission,
} from './permissions'
import { keyMemberId, type Principal } from './principal'
import { apiKeyPermissions, parseScopes } from './scopes'

/**
 * Headers that older clients of vendor gateways, and vendors' own SDKs (Anthropic's `x-api-key`,
 * Azure's `api-key`, Google's `x-goog-api-key`), send instead of `Authorization`. They are never
 * accepted (spec 5.1 rule 4, 9); seeing one only changes the 401 message so the caller knows why.
 */
const LEGACY_AUTH_HEADERS = ['gw-auth', 'x-api-key', 'api-key', 'x-gw-api-key', 'x-goog-api-key'] as const

/**
 * A verified credential is cached this long. Short enough that a revocation, a role change or a tier
 * change is seen within a second everywhere, long enough that steady traffic costs no database read.
 */
const CACHE_TTL_MS = 1_000
const CACHE_MAX_ENTRIES = 10_000
/** `lastUsedAt` is kept to the minute: exact enough to spot unused keys, cheap on the hot path. */
const LAST_USED_GRANULARITY_MS = 60_000

export interface AuthenticatorDeps {
  store: Store
  hasher: CredentialHasher
  invalidations: InvalidationBus
  now?: () => number
}

/**
 * Compares a presented token with a known one in time that depends on the length only, not on where
 * they differ. Tokens are ASCII; comparing char codes spares the two buffers per request that
 * `timingSafeEqual` would need.
 */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/** `Bearer <token>` as nearly every client writes it: read without splitting. */
const PLAIN_BEARER = /^Bearer [^\s]+$/

/** The token of a bearer header; the scheme in any case, with any spaces around it; undefined when it is not one. */
function bearerToken(header: string): string | undefined {
  if (PLAIN_BEARER.test(header)) return header.slice('Bearer '.length)
  const [scheme, token, ...rest] = header.trim().split(/\s+/)
  return scheme?.toLowerCase() === 'bearer' && token !== undefined && rest.length === 0 ? token : undefined
}

export class Authenticator {
  /** Keyed by credential kind and id, so a revocation can drop its entry; the token is compared on a hit. */
  private readonly cache: TtlCache<string, { token: string; principal: Principal }>
  private readonly now: () => number

  constructor(private readonly deps: AuthenticatorDeps) {
    this.now = deps.now ?? Date.now
    this.cache = new TtlCache(CACHE_MAX_ENTRIES, CACHE_TTL_MS, this.now)
    deps.invalidations.subscribe((cacheKey) => this.cache.delete(cacheKey))
  }

  /** Resolves the request's credential to a principal, or throws a 401 that says what is wrong. */
  async authenticate(headers: Headers): Promise<Principal> {
    return this.principalOf(headers)
  }

  /**
   * The same, answered at once when the credential is cached (a refusal thrown at once too): what the
   * gateway's calls ask, so a known key costs no promise.
   */
  principalOf(headers: Headers): ValueOrPromise<Principal> {
    const header = headers.get('authorization')
    if (header === null) {
      const legacy = LEGACY_AUTH_HEADERS.find((name) => headers.has(name))
      throw unauthorized(
        legacy
          ? `the ${legacy} header is not accepted; send the key as "Authorization: Bearer <API_KEY>"`
          : 'missing Authorization header; send "Authorization: Bearer <API_KEY>"',
      )
    }
    const token = bearerToken(header)
    if (token === undefined) throw unauthorized('the Authorization header must be "Bearer <API_KEY>"')
    const credential = parseCredential(token)
    if (!credential || credential.kind === 'invite') {
      throw unauthorized('the bearer token is not a gw API key (gw-sk-...) or session (gw-ses-...)')
    }

    const cacheKey = `${credential.kind}:${credential.id}`
    const cached = this.cache.get(cacheKey)
    // A cached principal is only ever found with its own whole token.
    if (cached && sameText(cached.token, token)) return cached.principal
    const resolving = credential.kind === 'api_key' ? this.apiKeyPrincipal(credential) : this.sessionPrincipal(credential)
    return resolving.then((principal) => {
      this.cache.set(cacheKey, { token, principal })
      return principal
    })
  }

  /** Drops a session everywhere, e.g. at logout: here at once, on other instances through the bus. */
  async forget(token: string): Promise<void> {
    const credential = parseCredential(token)
    if (credential) await this.deps.invalidations.publish(`${credential.kind}:${credential.id}`)
  }

  /** Drops sessions everywhere after their person's role or membership changed. */
  async forgetSessions(sessionIds: readonly string[]): Promise<void> {
    for (const id of sessionIds) await this.deps.invalidations.publish(`session:${id}`)
  }

  /** Drops API keys everywhere at once (an organisation deleted). */
  async forgetKeys(apiKeyIds: readonly string[]): Promise<void> {
    for (const id of apiKeyIds) await this.deps.invalidations.publish(`api_key:${id}`)
  }

  /** Drops an API key everywhere after it changed (revoked, scopes, expiry). */
  async forgetKey(apiKeyId: string): Promise<void> {
    await this.deps.invalidations.publish(`api_key:${apiKeyId}`)
  }

  private invalid(): never {
    // One message for unknown, revoked, expired and wrong-secret alike: which one it was is not the caller's business.
    throw unauthorized('the credential is unknown, revoked or expired')
  }

  private async organization(orgId: string): Promise<Organization> {
    const org = await this.deps.store.organizations.get(orgId)
    return org ?? this.invalid()
  }

  private isLive(record: { revokedAt: Date | null; expiresAt: Date | null }): boolean {
    const now = this.now()
    return record.revokedAt === null && (record.expiresAt === null || record.expiresAt.getTime() > now)
  }

  private async apiKeyPrincipal(credential: ParsedCredential): Promise<Principal> {
    const key = await this.deps.store.credentials.apiKey(credential.id)
    if (!key || !this.deps.hasher.matches(credential, key.secretHash) || !this.isLive(key)) this.invalid()
    const org = await this.organization(key.orgId)
    const keyScopes = parseScopes(key.scopes)
    const memberId = keyMemberId(key)
    const now = this.now()
    if (key.lastUsedAt === null || now - key.lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS) {
      // Best-effort metadata, written at most once a minute per key and off the request's path.
      void this.deps.store.credentials.touchApiKey(key.id, new Date(now)).catch(() => undefined)
    }
    return {
      kind: 'api_key',
      orgId: org.id,
      tier: org.tier,
      actorId: key.id,
      apiKeyId: key.id,
      ...(memberId ? { memberId } : {}),
      keyScopes,
      ...(key.providerKeyId ? { boundProviderKeyId: key.providerKeyId } : {}),
      permissions: apiKeyPermissions(keyScopes),
    }
  }

  private async sessionPrincipal(credential: ParsedCredential): Promise<Principal> {
    const { store, hasher } = this.deps
    const session = await store.credentials.session(credential.id)
    if (!session || !hasher.matches(credential, session.secretHash) || !this.isLive(session)) this.invalid()
    const [org, membership] = await Promise.all([
      this.organization(session.orgId),
      store.org(session.orgId).memberships.get(session.userId),
    ])
    // A session outlives nothing: without a membership in its organisation it is worth nothing.
    if (!membership) this.invalid()
    return {
      kind: 'session',
      orgId: org.id,
      tier: org.tier,
      actorId: session.userId,
      userId: session.userId,
      memberId: session.userId,
      sessionId: session.id,
      role: membership.role,
      permissions: await this.rolePermissions(org.id, membership.role),
    }
  }

  private async rolePermissions(orgId: string, role: string): Promise<Set<Permission>> {
    if (isBuiltInRole(role)) return new Set(BUILT_IN_ROLE_PERMISSIONS[role])
    const custom = await this.deps.store.org(orgId).roles.get(role)
    // An archived or vanished custom role falls back to Member: its holders keep the least there is.
    if (!custom || custom.archivedAt !== null) return new Set(MEMBER_PERMISSIONS)
    return new Set(customRolePermissions(custom.permissions))
  }
}
