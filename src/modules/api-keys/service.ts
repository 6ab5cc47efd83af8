import type { Authenticator } from '../../auth/authenticator'
import type { CredentialIssuer } from '../../auth/issuer'
import type { Principal } from '../../auth/principal'
import { CAPABILITY_SCOPES, validateScopes } from '../../auth/scopes'
import { badRequest, notFound, nothingToChange } from '../../errors'
import type { ApiKeyRecord } from '../../store/repositories/credentials'
import type { Store } from '../../store/store'
import type { CreateKeyInput, CreateProxyKeyInput, UpdateKeyInput } from './model'

/** What anyone in the organisation may see of a key: never its secret, nor its hash. */
const view = (key: ApiKeyRecord) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  scopes: key.scopes,
  providerKeyId: key.providerKeyId,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  expiresAt: key.expiresAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
})

function futureDate(value: string | null | undefined, now: number): Date | null | undefined {
  if (value === undefined || value === null) return value
  const date = new Date(value)
  if (date.getTime() <= now) throw badRequest('expiresAt must be in the future')
  return date
}

export class ApiKeysService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly authenticator: Authenticator,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).apiKeys.list()).map(view)
  }

  /** Creates a key; the answer is the only time its secret is shown. */
  async create(principal: Principal, input: CreateKeyInput) {
    return this.issue(principal, input, null)
  }

  /** A proxy key: a gw key that reaches one provider key of the organisation, and nothing else. */
  async createProxy(principal: Principal, input: CreateProxyKeyInput) {
    if (!(await this.store.org(principal.orgId).providerKeys.get(input.providerKeyId))) throw notFound('provider key')
    return this.issue(principal, input, input.providerKeyId)
  }

  async setProxyScopes(principal: Principal, id: string, scopes: string[]) {
    const existing = await this.store.org(principal.orgId).apiKeys.get(id)
    if (!existing || existing.providerKeyId === null) throw notFound('proxy key')
    return this.setScopes(principal, id, scopes)
  }

  private async issue(principal: Principal, input: CreateKeyInput, providerKeyId: string | null) {
    const scopes = validateScopes(input.scopes ?? [])
    const expiresAt = futureDate(input.expiresAt, this.now()) ?? null
    return this.store.transaction(async (tx) => {
      const org = tx.org(principal.orgId)
      const issued = await this.issuer.apiKey(org, {
        name: input.name,
        scopes,
        createdByUserId: principal.userId ?? null,
        expiresAt,
        providerKeyId,
      })
      const stored = await org.apiKeys.get(issued.apiKeyId)
      if (!stored) throw new Error('the key just created is missing')
      return { ...view(stored), key: issued.apiKey }
    })
  }

  async update(principal: Principal, id: string, input: UpdateKeyInput) {
    const change = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.expiresAt !== undefined ? { expiresAt: futureDate(input.expiresAt, this.now()) ?? null } : {}),
    }
    if (Object.keys(change).length === 0) throw nothingToChange('name, expiresAt')
    return this.change(principal, id, change)
  }

  async setScopes(principal: Principal, id: string, scopes: string[]) {
    return this.change(principal, id, { scopes: validateScopes(scopes) })
  }

  /** Revokes at once here, and within a second on every other instance (their credential caches lapse). */
  async revoke(principal: Principal, id: string) {
    const existing = await this.store.org(principal.orgId).apiKeys.get(id)
    if (!existing) throw notFound('API key')
    if (existing.revokedAt !== null) return view(existing)
    return this.change(principal, id, { revokedAt: new Date(this.now()) })
  }

  /** Which scopes this organisation's keys may carry; every tier may use all of them. */
  entitlement(principal: Principal) {
    return {
      tier: principal.tier,
      capabilities: [...CAPABILITY_SCOPES],
      allowlists: ['provider:<name>', 'model:<id>', 'model:<prefix>*'],
    }
  }

  private async change(
    principal: Principal,
    id: string,
    change: Partial<Pick<ApiKeyRecord, 'name' | 'expiresAt' | 'scopes' | 'revokedAt'>>,
  ) {
    const updated = await this.store.org(principal.orgId).apiKeys.update(id, change)
    if (!updated) throw notFound('API key')
    await this.authenticator.forgetKey(id)
    return view(updated)
  }
}

/** The organisation-wide MCP connection listings, as the keys area shows them. */
export class McpConnectionsView {
  constructor(private readonly store: Store) {}

  async connections(orgId: string) {
    return (await this.store.org(orgId).mcpConnections.list()).map((c) => ({
      id: c.id,
      userId: c.userId,
      client: c.client,
      scopes: c.scopes,
      createdAt: c.createdAt.toISOString(),
      revokedAt: c.revokedAt?.toISOString() ?? null,
    }))
  }

  async upstream(orgId: string) {
    return (await this.store.org(orgId).mcpConnections.listUpstream()).map((c) => ({
      id: c.id,
      userId: c.userId,
      serverUrl: c.serverUrl,
      status: c.status,
      createdAt: c.createdAt.toISOString(),
    }))
  }
}
