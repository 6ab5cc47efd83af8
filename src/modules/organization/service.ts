import { auditEntry } from '../../audit/entry'
import { userForEmail } from '../../auth/accounts'
import type { CredentialIssuer } from '../../auth/issuer'
import { hashPassword } from '../../auth/passwords'
import { PERMISSIONS } from '../../auth/permissions'
import type { Principal } from '../../auth/principal'
import type { Tier } from '../../auth/tiers'
import { notFound } from '../../errors'
import type { Store } from '../../store/store'

export interface BootstrapInput {
  orgName: string
  email: string
  tier: Tier
  password?: string
}

export interface BootstrapResult {
  orgId: string
  userId: string
  apiKey: string
  sessionToken: string
}

export class OrganizationService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates an organisation with its Owner, a first API key and an Owner session, all or nothing. */
  async bootstrap(input: BootstrapInput): Promise<BootstrapResult> {
    const passwordHash = input.password ? await hashPassword(input.password) : undefined
    return this.store.transaction(async (tx) => {
      const orgId = crypto.randomUUID()
      const now = new Date(this.now())
      await tx.organizations.create({ id: orgId, name: input.orgName, tier: input.tier, creditBalanceNano: 0, createdAt: now })
      const userId = await userForEmail(tx, input.email, this.now)
      if (passwordHash) await tx.users.setPasswordHash(userId, passwordHash)
      const org = tx.org(orgId)
      await org.memberships.add({ userId, role: 'owner', createdAt: now })
      const key = await this.issuer.apiKey(org, { name: 'bootstrap', scopes: [], createdByUserId: userId })
      const session = await this.issuer.session(org, userId)
      await org.audit.append(
        auditEntry({ kind: 'cli', id: userId, orgId }, 'organization.bootstrap', `organization:${orgId}`, {
          at: new Date(this.now()),
          detail: { tier: input.tier, apiKeyPrefix: key.prefix },
        }),
      )
      return { orgId, userId, apiKey: key.apiKey, sessionToken: session.sessionToken }
    })
  }

  /** Adds pass-through-billing credits (the CLI's `credits add`); the amount is whole nano-USD. */
  async addCredits(orgId: string, usd: number): Promise<{ orgId: string; creditsRemaining: number }> {
    const balance = await this.store.organizations.addCredits(orgId, Math.round(usd * 1e9))
    if (balance === undefined) throw notFound('organization')
    await this.store.org(orgId).audit.append(
      auditEntry({ kind: 'cli', id: null, orgId }, 'credits.add', `organization:${orgId}`, {
        at: new Date(this.now()),
        detail: { usd },
      }),
    )
    return { orgId, creditsRemaining: balance / 1e9 }
  }

  /** The caller's effective permissions, in catalogue order. */
  permissionsOf(principal: Principal) {
    return {
      principal: principal.kind,
      role: principal.role ?? null,
      permissions: PERMISSIONS.filter((p) => principal.permissions.has(p)),
    }
  }
}
