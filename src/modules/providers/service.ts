import type { Principal } from '../../auth/principal'
import { providersOf } from '../../directory/catalogue'
import { PROVIDER_NAMES, PROVIDERS_TABLE, type ProviderName } from '../../directory/providers'
import type { PricedModel, PriceSource } from '../../money/price-book'
import { PRICE_TABLE } from '../../money/prices'
import type { Store } from '../../store/store'
import type { ProviderModelView } from './model'

/** Prices are kept per token in nano-USD and published per million tokens in USD. */
const usdPerMillion = (nanoPerToken: number | undefined) => (nanoPerToken === undefined ? null : nanoPerToken / 1_000)

/** A model a provider serves by its bare name, before any organisation's prices. */
interface CataloguedModel {
  id: string
  maxOutputTokens: number
}

/**
 * The models each provider serves by their bare names: the price table's rows of its own, and those
 * of the families the catalogue says it serves too (Vertex Gemini's, Azure OpenAI's). Built once: both
 * tables are data.
 */
const MODELS: Readonly<Record<ProviderName, readonly CataloguedModel[]>> = (() => {
  const byProvider = new Map<ProviderName, CataloguedModel[]>(PROVIDER_NAMES.map((name) => [name, []]))
  for (const row of PRICE_TABLE) {
    const servers = new Set<ProviderName>([row.provider, ...providersOf(row.model)])
    for (const name of servers) byProvider.get(name)?.push({ id: row.model, maxOutputTokens: row.maxOutputTokens })
  }
  return Object.fromEntries(byProvider) as Record<ProviderName, CataloguedModel[]>
})()

/** A model at the price the organisation pays for it: its own price where it set one, else the built-in table's. */
const pricedView = (model: CataloguedModel, priced: PricedModel | undefined): ProviderModelView => ({
  id: model.id,
  maxOutputTokens: priced?.price.maxOutputTokens ?? model.maxOutputTokens,
  inputUsdPerMillion: usdPerMillion(priced?.price.inputNanoPerToken),
  outputUsdPerMillion: usdPerMillion(priced?.price.outputNanoPerToken),
  priceSource: priced?.source ?? null,
})

/**
 * The providers gw can call, as an organisation sees them (`GET /v1/gateway/providers`, org.read). The
 * operator's configuration reaches it as which providers are configured, nothing more: an operator's
 * key is a secret, and its addresses are its own network's.
 */
export class ProvidersService {
  constructor(
    private readonly store: Store,
    private readonly operatorConfigured: ReadonlySet<ProviderName>,
    /** What calls cost the organisation: its own prices over the built-in table (the gateway's own). */
    private readonly prices: PriceSource,
  ) {}

  async list(principal: Principal) {
    const org = this.store.org(principal.orgId)
    const [counts, overrides] = await Promise.all([org.providerKeys.countsByProvider(), org.modelPrices.list()])
    const keys = new Map(counts.map((row) => [row.provider, row.keys]))
    return Promise.all(
      PROVIDER_NAMES.map(async (name) => ({
        name,
        label: PROVIDERS_TABLE[name].label,
        kind: PROVIDERS_TABLE[name].kind,
        operator: { configured: this.operatorConfigured.has(name) },
        keys: keys.get(name) ?? 0,
        models: await this.modelsOf(principal.orgId, name, overrides),
      })),
    )
  }

  /** The catalogued models, and the ones the organisation priced itself that the catalogue does not list. */
  private async modelsOf(orgId: string, provider: ProviderName, overrides: readonly { provider: string; model: string }[]) {
    const listed = new Set(MODELS[provider].map((model) => model.id))
    const own = overrides
      .filter((row) => row.provider === provider && !listed.has(row.model))
      .map((row): CataloguedModel => ({ id: row.model, maxOutputTokens: 0 }))
    const models = [...MODELS[provider], ...new Map(own.map((model) => [model.id, model])).values()]
    return Promise.all(models.map(async (model) => pricedView(model, await this.prices.priceOf(orgId, provider, model.id))))
  }
}
