import type { Principal } from '../../auth/principal'
import { providersOf } from '../../directory/catalogue'
import { PROVIDER_NAMES, PROVIDERS_TABLE, type ProviderName } from '../../directory/providers'
import { priceFor } from '../../money/cost'
import { PRICE_TABLE } from '../../money/prices'
import type { Store } from '../../store/store'
import type { ProviderModelView } from './model'

/** Prices are kept per token in nano-USD and published per million tokens in USD. */
const usdPerMillion = (nanoPerToken: number | undefined) => (nanoPerToken === undefined ? null : nanoPerToken / 1_000)

/**
 * The models each provider serves by their bare names: the price table's rows of its own, and those
 * of the families the catalogue says it serves too (Vertex Gemini's, Azure OpenAI's), at the price it
 * bills them at. Built once: both tables are data.
 */
const MODELS: Readonly<Record<ProviderName, readonly ProviderModelView[]>> = (() => {
  const byProvider = new Map<ProviderName, ProviderModelView[]>(PROVIDER_NAMES.map((name) => [name, []]))
  for (const row of PRICE_TABLE) {
    const servers = new Set<ProviderName>([row.provider, ...providersOf(row.model)])
    for (const name of servers) {
      const price = priceFor(name, row.model)
      byProvider.get(name)?.push({
        id: row.model,
        maxOutputTokens: row.maxOutputTokens,
        inputUsdPerMillion: usdPerMillion(price?.inputNanoPerToken),
        outputUsdPerMillion: usdPerMillion(price?.outputNanoPerToken),
      })
    }
  }
  return Object.fromEntries(byProvider) as Record<ProviderName, ProviderModelView[]>
})()

/**
 * The providers gw can call, as an organisation sees them (`GET /v1/gateway/providers`, org.read). The
 * operator's configuration reaches it as which providers are configured, nothing more: an operator's
 * key is a secret, and its addresses are its own network's.
 */
export class ProvidersService {
  constructor(
    private readonly store: Store,
    private readonly operatorConfigured: ReadonlySet<ProviderName>,
  ) {}

  async list(principal: Principal) {
    const counts = await this.store.org(principal.orgId).providerKeys.countsByProvider()
    const keys = new Map(counts.map((row) => [row.provider, row.keys]))
    return PROVIDER_NAMES.map((name) => ({
      name,
      label: PROVIDERS_TABLE[name].label,
      kind: PROVIDERS_TABLE[name].kind,
      operator: { configured: this.operatorConfigured.has(name) },
      keys: keys.get(name) ?? 0,
      models: [...MODELS[name]],
    }))
  }
}
