import type { Principal } from '../../auth/principal'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import type { OrgConnections } from '../../directory/connections'
import type { ProviderName } from '../../directory/providers'
import type { EgressPolicy } from '../../egress/policy'
import { notFound, nothingToChange } from '../../errors'
import type { ProviderKeyRecord } from '../../store/repositories/provider-keys'
import type { Store } from '../../store/store'
import type { CreateProviderKeyInput, UpdateProviderKeyInput } from './model'
import { checkKey, settingsIn } from './settings'

const sealContext = sealContexts.providerKey

/** Reads show the secret masked, never whole. */
const view = (key: ProviderKeyRecord) => ({
  id: key.id,
  provider: key.provider,
  name: key.name,
  baseUrl: key.baseUrl,
  weight: key.weight,
  secret: key.hint,
  ...key.settings,
  createdAt: key.createdAt.toISOString(),
  updatedAt: key.updatedAt.toISOString(),
})

/**
 * An organisation's own provider keys (spec 4.6 `provider_keys.write`): sealed when saved, masked when
 * read. Calls read them through the directory, which each change here tells to forget what it holds.
 */
export class ProviderKeysService {
  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    /** An organisation's own base URL is an address a user configures: held to the egress policy. */
    private readonly egress: Pick<EgressPolicy, 'requireSavable'>,
    private readonly connections: Pick<OrgConnections, 'forget'>,
    private readonly now: () => number = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).providerKeys.list()).map(view)
  }

  async get(principal: Principal, id: string) {
    const key = await this.store.org(principal.orgId).providerKeys.get(id)
    if (!key) throw notFound('provider key')
    return view(key)
  }

  async create(principal: Principal, input: CreateProviderKeyInput) {
    if (input.baseUrl !== undefined) this.egress.requireSavable(input.baseUrl, 'baseUrl')
    const settings = settingsIn(input)
    const { hint } = checkKey({ provider: input.provider, baseUrl: input.baseUrl ?? null, secret: input.secret, settings })
    const now = new Date(this.now())
    const id = crypto.randomUUID()
    const key: ProviderKeyRecord = {
      id,
      orgId: principal.orgId,
      provider: input.provider,
      name: input.name,
      baseUrl: input.baseUrl ?? null,
      sealedSecret: await this.vault.seal(input.secret, sealContext({ orgId: principal.orgId, id })),
      hint: hint ?? maskSecret(input.secret),
      weight: input.weight ?? 1,
      settings: Object.keys(settings).length > 0 ? settings : null,
      createdAt: now,
      updatedAt: now,
    }
    await this.store.org(principal.orgId).providerKeys.create(key)
    this.forget(principal.orgId, key.provider)
    return view(key)
  }

  async update(principal: Principal, id: string, input: UpdateProviderKeyInput) {
    const changed = settingsIn(input)
    if (Object.values(input).every((value) => value === undefined))
      throw nothingToChange(
        'name, secret, baseUrl, weight, or a setting of the key (region, accessKeyId, apiVersion, project, location, models)',
      )
    if (typeof input.baseUrl === 'string') this.egress.requireSavable(input.baseUrl, 'baseUrl')
    const keys = this.store.org(principal.orgId).providerKeys
    const existing = await keys.get(id)
    if (!existing) throw notFound('provider key')
    const settings = { ...existing.settings, ...changed }
    const baseUrl = input.baseUrl === undefined ? existing.baseUrl : input.baseUrl
    const { hint } = checkKey({ provider: existing.provider, baseUrl, secret: input.secret, settings })
    const change = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.baseUrl !== undefined ? { baseUrl: input.baseUrl } : {}),
      ...(input.weight !== undefined ? { weight: input.weight } : {}),
      ...(Object.keys(changed).length > 0 ? { settings } : {}),
      ...(input.secret !== undefined
        ? {
            sealedSecret: await this.vault.seal(input.secret, sealContext({ orgId: principal.orgId, id })),
            hint: hint ?? maskSecret(input.secret),
          }
        : {}),
      updatedAt: new Date(this.now()),
    }
    const updated = await keys.update(id, change)
    if (!updated) throw notFound('provider key')
    this.forget(principal.orgId, updated.provider, id)
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    const existing = await this.store.org(principal.orgId).providerKeys.get(id)
    if (!existing) throw notFound('provider key')
    // The key and its proxy keys go together.
    await this.store.transaction((tx) => tx.org(principal.orgId).providerKeys.delete(id))
    this.forget(principal.orgId, existing.provider, id)
    return { id, deleted: true as const }
  }

  private forget(orgId: string, provider: ProviderName, id?: string): void {
    this.connections.forget(orgId, provider, id)
  }
}
