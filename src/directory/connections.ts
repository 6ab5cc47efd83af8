import { sealContexts, type Vault } from '../auth/vault'
import type { ConnectionSettings } from '../store/json-columns'
import type { ProviderKeyRecord } from '../store/repositories/provider-keys'
import type { Store } from '../store/store'
import { TtlCache } from '../util/ttl-cache'
import type { ProviderName } from './providers'

/** An organisation's own key for a provider (BYOK), opened, as the gateway calls with it. */
export interface OrgProviderKey {
  id: string
  provider: ProviderName
  apiKey: string
  /** Absent: the operator's base URL for that provider. */
  baseUrl: string | null
  /** Its share of the provider's calls among the organisation's keys; 0: a standby key. */
  weight: number
  /** Where and as whom the provider is called (a region, a project, model aliases). */
  settings: ConnectionSettings | null
}

/** Where the gateway finds an organisation's own keys. */
export interface OrgKeySource {
  newestFor(orgId: string, provider: ProviderName): Promise<OrgProviderKey | null>
  /** Every key of the organisation for a provider, newest first (none: an empty list). */
  keysFor(orgId: string, provider: ProviderName): Promise<OrgProviderKey[]>
  /**
   * The same list while it is cached, as it is held (not a copy), else undefined: for a reader that
   * changes nothing and should not wait a turn of the event loop for what is already in memory.
   */
  cachedKeysFor(orgId: string, provider: ProviderName): readonly OrgProviderKey[] | undefined
  byId(orgId: string, id: string): Promise<OrgProviderKey | null>
}

/** The gateway reads an organisation's provider keys this fresh; a change is in force within a second everywhere. */
const CREDENTIALS_CACHE_MS = 1_000
const CACHED_ENTRIES = 100_000
const byIdKey = (orgId: string, id: string) => `${orgId}#${id}`
const byProviderKey = (orgId: string, provider: ProviderName) => `${orgId}:${provider}`

/**
 * The organisations' own provider keys as calls read them: opened from the vault, held for a second,
 * and forgotten on this instance the moment the provider-keys module changes one.
 */
export class OrgConnections implements OrgKeySource {
  private readonly keys: TtlCache<string, OrgProviderKey | null>
  /** A provider's keys of one organisation, as one entry: a change to any of them drops it. */
  private readonly lists: TtlCache<string, readonly OrgProviderKey[]>

  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    now: () => number = Date.now,
  ) {
    this.keys = new TtlCache(CACHED_ENTRIES, CREDENTIALS_CACHE_MS, now)
    this.lists = new TtlCache(CACHED_ENTRIES, CREDENTIALS_CACHE_MS, now)
  }

  /** The organisation's newest key for a provider, or null when it has none. */
  async newestFor(orgId: string, provider: ProviderName): Promise<OrgProviderKey | null> {
    const cacheKey = byProviderKey(orgId, provider)
    const cached = this.keys.get(cacheKey)
    if (cached !== undefined) return cached
    const key = await this.store.org(orgId).providerKeys.newestFor(provider)
    const opened = key ? await this.open(key) : null
    this.keys.set(cacheKey, opened)
    return opened
  }

  /** Every key of the organisation for a provider, newest first: what the gateway balances calls over. */
  async keysFor(orgId: string, provider: ProviderName): Promise<OrgProviderKey[]> {
    const cacheKey = byProviderKey(orgId, provider)
    let keys = this.lists.get(cacheKey)
    if (keys === undefined) {
      keys = await Promise.all((await this.store.org(orgId).providerKeys.listFor(provider)).map((key) => this.open(key)))
      this.lists.set(cacheKey, keys)
    }
    // A copy: a caller that sorts or filters its list must not change the next caller's.
    return [...keys]
  }

  cachedKeysFor(orgId: string, provider: ProviderName): readonly OrgProviderKey[] | undefined {
    return this.lists.get(byProviderKey(orgId, provider))
  }

  /** One key of the organisation, for a proxy key bound to it (every call of that key asks). */
  async byId(orgId: string, id: string): Promise<OrgProviderKey | null> {
    const cacheKey = byIdKey(orgId, id)
    const cached = this.keys.get(cacheKey)
    if (cached !== undefined) return cached
    const key = await this.store.org(orgId).providerKeys.get(id)
    const opened = key ? await this.open(key) : null
    this.keys.set(cacheKey, opened)
    return opened
  }

  /** A change to a key drops every cached view it appears in, on this instance (others within the second). */
  forget(orgId: string, provider: ProviderName, id?: string): void {
    this.keys.delete(byProviderKey(orgId, provider))
    this.lists.delete(byProviderKey(orgId, provider))
    if (id !== undefined) this.keys.delete(byIdKey(orgId, id))
  }

  private async open(key: ProviderKeyRecord): Promise<OrgProviderKey> {
    return {
      id: key.id,
      provider: key.provider,
      apiKey: await this.vault.open(key.sealedSecret, sealContexts.providerKey(key)),
      baseUrl: key.baseUrl,
      weight: key.weight,
      settings: key.settings,
    }
  }
}
