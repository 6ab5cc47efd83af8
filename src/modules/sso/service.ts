import { resolveTxt } from 'node:dns/promises'
import type { Principal } from '../../auth/principal'
import { requireTier, tierAtLeast } from '../../auth/tiers'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import { type EgressPolicy, EgressRefused } from '../../egress/policy'
import { badRequest, egressDisabled, notFound } from '../../errors'
import type { SsoConfig } from '../../store/repositories/sso'
import type { Store } from '../../store/store'
import { randomBytes } from '../../util/random'
import type { SsoInput } from './model'

/** Looks up TXT records; the system resolver in production, a stand-in in tests. */
export type TxtResolver = (name: string) => Promise<string[][]>

const DISCOVERY_TIMEOUT_MS = 5_000
/** A discovery document is a few KiB; anything far larger is not one, and is not held in memory. */
const MAX_DISCOVERY_CHARS = 1024 * 1024
const CHALLENGE_PREFIX = '_gw-challenge'

const view = (c: SsoConfig) => ({
  issuer: c.issuer,
  clientId: c.clientId,
  clientSecret: c.clientSecretHint,
  domain: c.domain,
  domainVerified: c.domainVerifiedAt !== null,
  enforced: c.enforced,
  updatedAt: c.updatedAt.toISOString(),
})

/** Single sign-on settings (Enterprise): OIDC issuer and client, a verified email domain, enforcement. */
export class SsoService {
  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly egress: EgressPolicy,
    private readonly resolve: TxtResolver = resolveTxt,
    private readonly now: () => number = Date.now,
  ) {}

  entitlement(principal: Principal) {
    return { sso: tierAtLeast(principal.tier, 'enterprise'), requiredTier: 'enterprise' as const, tier: principal.tier }
  }

  async get(principal: Principal) {
    const config = await this.store.org(principal.orgId).sso.get()
    if (!config) throw notFound('SSO configuration')
    return view(config)
  }

  async put(principal: Principal, input: SsoInput) {
    requireTier(principal.tier, 'enterprise', 'Single sign-on')
    const existing = await this.store.org(principal.orgId).sso.get()
    if (!existing && input.clientSecret === undefined)
      throw badRequest('clientSecret is required the first time SSO is configured')
    const domain = input.domain?.toLowerCase() ?? existing?.domain ?? null
    const domainChanged = domain !== (existing?.domain ?? null)
    const config: SsoConfig = {
      orgId: principal.orgId,
      issuer: input.issuer.replace(/\/+$/, ''),
      clientId: input.clientId,
      sealedClientSecret:
        input.clientSecret !== undefined
          ? await this.vault.seal(input.clientSecret, sealContexts.ssoClientSecret(principal.orgId))
          : (existing as SsoConfig).sealedClientSecret,
      clientSecretHint:
        input.clientSecret !== undefined ? maskSecret(input.clientSecret) : (existing as SsoConfig).clientSecretHint,
      domain,
      // A new domain must be verified anew.
      domainChallenge: domainChanged ? null : (existing?.domainChallenge ?? null),
      domainVerifiedAt: domainChanged ? null : (existing?.domainVerifiedAt ?? null),
      enforced: existing?.enforced ?? false,
      updatedAt: new Date(this.now()),
    }
    await this.store.org(principal.orgId).sso.put(config)
    return view(config)
  }

  async remove(principal: Principal) {
    if (!(await this.store.org(principal.orgId).sso.delete())) throw notFound('SSO configuration')
    return { deleted: true as const }
  }

  /**
   * Fetches the issuer's OpenID discovery document and reports what it found (never the secret). The
   * issuer is a URL a person typed: it goes through the egress policy like a webhook's destination, so
   * the check cannot be turned on gw's own network (a cloud metadata address, an internal service).
   */
  async test(principal: Principal) {
    const config = await this.store.org(principal.orgId).sso.get()
    if (!config) throw notFound('SSO configuration')
    if (!this.egress.enabled) throw egressDisabled()
    const url = `${config.issuer}/.well-known/openid-configuration`
    try {
      const response = await this.egress.fetch(url, { headers: { accept: 'application/json' }, timeoutMs: DISCOVERY_TIMEOUT_MS })
      if (!response.ok) {
        await response.body?.cancel()
        return { ok: false as const, url, error: `the issuer answered ${response.status}` }
      }
      const text = await response.text()
      if (text.length > MAX_DISCOVERY_CHARS)
        return { ok: false as const, url, error: 'the discovery document is larger than 1 MiB' }
      const document = JSON.parse(text) as Record<string, unknown>
      const issuerMatches = typeof document.issuer === 'string' && document.issuer.replace(/\/+$/, '') === config.issuer
      return {
        ok: issuerMatches && typeof document.authorization_endpoint === 'string' && typeof document.token_endpoint === 'string',
        url,
        issuer: document.issuer ?? null,
        issuerMatches,
        authorizationEndpoint: document.authorization_endpoint ?? null,
        tokenEndpoint: document.token_endpoint ?? null,
        jwksUri: document.jwks_uri ?? null,
      }
    } catch (error) {
      return {
        ok: false as const,
        url,
        error:
          error instanceof EgressRefused
            ? error.message
            : error instanceof Error && error.name === 'TimeoutError'
              ? `no answer within ${DISCOVERY_TIMEOUT_MS} ms`
              : String(error),
      }
    }
  }

  /**
   * Domain ownership by DNS: the first call issues a challenge to publish as a TXT record at
   * `_gw-challenge.<domain>`; later calls look it up with the system resolver.
   */
  async verifyDomain(principal: Principal) {
    const config = await this.store.org(principal.orgId).sso.get()
    if (!config) throw notFound('SSO configuration')
    if (!config.domain) throw badRequest('set a domain in the SSO configuration first')
    const record = `${CHALLENGE_PREFIX}.${config.domain}`
    if (config.domainVerifiedAt) return { domain: config.domain, verified: true, record }
    if (!config.domainChallenge) {
      const challenge = `gw-verify=${randomBytes(16).toString('hex')}`
      await this.store.org(principal.orgId).sso.put({ ...config, domainChallenge: challenge, updatedAt: new Date(this.now()) })
      return { domain: config.domain, verified: false, record, value: challenge }
    }
    const found = await this.resolve(record).catch((): string[][] => [])
    const verified = found.some((chunks) => chunks.join('') === config.domainChallenge)
    if (verified)
      await this.store
        .org(principal.orgId)
        .sso.put({ ...config, domainVerifiedAt: new Date(this.now()), updatedAt: new Date(this.now()) })
    return { domain: config.domain, verified, record, value: config.domainChallenge }
  }

  /** Once on, password login refuses this organisation's members (ownership action). */
  async enforce(principal: Principal, enforced: boolean) {
    const config = await this.store.org(principal.orgId).sso.get()
    if (!config) throw badRequest('configure SSO before enforcing it')
    await this.store.org(principal.orgId).sso.put({ ...config, enforced, updatedAt: new Date(this.now()) })
    return { enforced }
  }
}
