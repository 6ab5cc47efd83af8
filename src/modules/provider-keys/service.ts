import { randomUUID } from 'node:crypto'
import type { Principal } from '../../auth/principal'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import { notFound, nothingToChange } from '../../errors'
import type { OrgKeySource, OrgProviderKey, ProviderName } from '../../gateway/providers/provider'
import type { ProviderKeyRecord } from '../../store/repositories/provider-keys'
import type { Store } from '../../store/store'
import { TtlCache } from '../../util/ttl-cache'
import type { CreateProviderKeyInput, UpdateProviderKeyInput } from './model'

const sealContext = sealContexts.providerKey

/** Reads show the secret masked, never whole. */
const view = (key: ProviderKeyRecord) => ({
  id: key.id,
  provider: key.provider,
  name: key.name,
  baseUrl: key.baseUrl,
  secret: key.hint,
  createdAt: key.createdAt.toISOString(),
  updatedAt: key.updatedAt.toISOString(),
})

/** The gateway reads an organisation's provider keys this fresh; a change is in force within a second everywhere. */
const CREDENTIALS_CACHE_MS = 1_000
const byIdKey = (orgId: string, id: string) => `${orgId}#${id}`

export class ProviderKeysService implements OrgKeySource {
  private readonly cache: TtlCache<string, OrgProviderKey | null>

  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new TtlCache(100_000, CREDENTIALS_CACHE_MS, now)
  }

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).providerKeys.list()).map(view)
  }

  async get(principal: Principal, id: string) {
    const key = await this.store.org(principal.orgId).providerKeys.get(id)
    if (!key) throw notFound('provider key')
    return view(key)
  }

  async create(principal: Principal, input: CreateProviderKeyInput) {
    const now = new Date(this.now())
    const id = randomUUID()
    const key: ProviderKeyRecord = {
      id,
      orgId: principal.orgId,
      provider: input.provider,
      name: input.name,
      baseUrl: input.baseUrl ?? null,
      sealedSecret: this.vault.seal(input.secret, sealContext({ orgId: principal.orgId, id })),
      hint: maskSecret(input.secret),
      createdAt: now,
      updatedAt: now,
    }
    await this.store.org(principal.orgId).providerKeys.create(key)
    this.cache.delete(`${principal.orgId}:${key.provider}`)
    return view(key)
  }

  async update(principal: Principal, id: string, input: UpdateProviderKeyInput) {
    if (input.name === undefined && input.secret === undefined && input.baseUrl === undefined)
      throw nothingToChange('name, secret, baseUrl')
    const change = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.baseUrl !== undefined ? { baseUrl: input.baseUrl } : {}),
      ...(input.secret !== undefined
        ? {
            sealedSecret: this.vault.seal(input.secret, sealContext({ orgId: principal.orgId, id })),
            hint: maskSecret(input.secret),
          }
        : {}),
      updatedAt: new Date(this.now()),
    }
    const updated = await this.store.org(principal.orgId).providerKeys.update(id, change)
    if (!updated) throw notFound('provider key')
    this.cache.delete(`${principal.orgId}:${updated.provider}`)
    this.cache.delete(byIdKey(principal.orgId, id))
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    const existing = await this.store.org(principal.orgId).providerKeys.get(id)
    if (!existing) throw notFound('provider key')
    // The key and its proxy keys go together.
    await this.store.transaction((tx) => tx.org(principal.orgId).providerKeys.delete(id))
    this.cache.delete(`${principal.orgId}:${existing.provider}`)
    this.cache.delete(byIdKey(principal.orgId, id))
    return { id, deleted: true as const }
  }

  /** The organisation's newest key for a provider (BYOK), or null when it has none. */
  async newestFor(orgId: string, provider: ProviderName): Promise<OrgProviderKey | null> {
    const cacheKey = `${orgId}:${provider}`
    const cached = this.cache.get(cacheKey)
    if (cached !== undefined) return cached
    const key = await this.store.org(orgId).providerKeys.newestFor(provider)
    const opened = key ? this.open(key) : null
    this.cache.set(cacheKey, opened)
    return opened
  }

  /** One key of the organisation, for a proxy key bound to it (every call of that key asks). */
  async byId(orgId: string, id: string): Promise<OrgProviderKey | null> {
    const cacheKey = byIdKey(orgId, id)
    const cached = this.cache.get(cacheKey)
    if (cached !== undefined) return cached
    const key = await this.store.org(orgId).providerKeys.get(id)
    const opened = key ? this.open(key) : null
    this.cache.set(cacheKey, opened)
    return opened
  }

  private open(key: ProviderKeyRecord): OrgProviderKey {
    return {
      id: key.id,
      provider: key.provider,
      apiKey: this.vault.open(key.sealedSecret, sealContext(key)),
      baseUrl: key.baseUrl,
    }
  }
}
