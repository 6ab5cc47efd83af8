import { isProviderName, type ProviderName } from '../directory/providers'
import type { ModelPriceRow } from '../store/repositories/model-prices'
import type { Clock, Store } from '../store/store'
import { remembered } from '../util/remembered'
import { TtlCache } from '../util/ttl-cache'
import type { ValueOrPromise } from '../util/value-or-promise'
import { modelFamily, priceFor } from './cost'
import type { ModelPrice } from './prices'

/** A model's price for one organisation, and where it came from: what a request record says it used. */
export interface PricedModel {
  price: ModelPrice
  /** `builtin` (the table in prices.ts) or `override:<id>` (the organisation's own price). */
  source: string
}

/** Where the gateway reads a model's price for a call: the organisation's override, else the built-in table. */
export interface PriceSource {
  priceOf(orgId: string, provider: ModelPrice['provider'], model: string): ValueOrPromise<PricedModel | undefined>
}

/**
 * The built-in table's answers, kept: the table never changes while gw runs, and a call would
 * otherwise resolve its model (snapshot suffixes, a maker's row behind Bedrock's id) every time.
 */
const builtinAnswer = remembered((key): PricedModel | undefined => {
  // The provider's name holds no line break; a model's may, so only the first one splits.
  const at = key.indexOf('\n')
  const price = priceFor(key.slice(0, at) as ModelPrice['provider'], key.slice(at + 1))
  return price && { price, source: 'builtin' }
}, 4096)

/** The built-in table only: what an organisation without overrides pays. */
export const builtinPrice = (provider: ModelPrice['provider'], model: string): PricedModel | undefined =>
  builtinAnswer(`${provider}\n${model}`)

export const BUILTIN_PRICES: PriceSource = {
  priceOf: (_orgId, provider, model) => builtinPrice(provider, model),
}

type Provider = ProviderName

/**
 * Overrides are read this fresh: a change is in force on every instance within a second (at once on the
 * instance that made it), with no database read per call in between.
 */
const OVERRIDE_CACHE_MS = 1_000

/** Stored rates are per million tokens; `ModelPrice` rates are per token, and may be fractional. */
const TOKENS_PER_MTOK = 1_000_000

interface Override {
  priced: PricedModel
  effectiveFrom: number
  /** The row set no maximum output of its own, so it takes the built-in row's. */
  inheritsMaxOutput: boolean
}

/** One organisation's overrides: per provider, per model id, newest first. */
type OverrideIndex = ReadonlyMap<Provider, ReadonlyMap<string, readonly Override[]>>

const NO_OVERRIDES: ReadonlyMap<string, readonly Override[]> = new Map()

const perToken = (nanoPerMtok: number | null) => (nanoPerMtok === null ? undefined : nanoPerMtok / TOKENS_PER_MTOK)

/** An override as the price of a call. Absent cache rates bill as input, as they do in the built-in table. */
export function overridePrice(row: ModelPriceRow & { provider: Provider }): ModelPrice {
  const cacheRead = perToken(row.cacheReadNanoPerMtok)
  const cacheWrite = perToken(row.cacheWriteNanoPerMtok)
  return {
    provider: row.provider,
    model: row.model,
    inputNanoPerToken: row.inputNanoPerMtok / TOKENS_PER_MTOK,
    outputNanoPerToken: row.outputNanoPerMtok / TOKENS_PER_MTOK,
    ...(cacheRead === undefined ? {} : { cacheReadNanoPerToken: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteNanoPerToken: cacheWrite }),
    // The service refuses an override without a maximum for a model the table does not know: 0 is
    // reached only by a row written around it, and bounds the estimate by the prompt alone.
    maxOutputTokens: row.maxOutputTokens ?? priceFor(row.provider, row.model)?.maxOutputTokens ?? 0,
    ...(row.perRequestNano === null ? {} : { perRequestNano: row.perRequestNano }),
    source: `override:${row.id}`,
    asOf: row.effectiveFrom.toISOString().slice(0, 10),
  }
}

function indexOf(rows: readonly ModelPriceRow[]): OverrideIndex {
  const index = new Map<Provider, Map<string, Override[]>>()
  for (const row of rows) {
    const provider = row.provider
    if (!isProviderName(provider)) continue
    const price = overridePrice({ ...row, provider })
    const override: Override = {
      priced: { price, source: price.source },
      effectiveFrom: row.effectiveFrom.getTime(),
      inheritsMaxOutput: row.maxOutputTokens === null,
    }
    const byModel = index.get(provider) ?? new Map<string, Override[]>()
    index.set(provider, byModel)
    const same = byModel.get(row.model)
    if (same) same.push(override)
    else byModel.set(row.model, [override])
  }
  for (const byModel of index.values())
    for (const list of byModel.values()) list.sort((a, b) => b.effectiveFrom - a.effectiveFrom)
  return index
}

/** The newest of a model id's overrides that has taken effect by `at`. */
function inForceAt(overrides: readonly Override[] | undefined, at: number): Override | undefined {
  if (overrides === undefined) return undefined
  for (const override of overrides) if (override.effectiveFrom <= at) return override
  return undefined
}

/**
 * The override that prices `model` at `at`: the model id's own, else its family's (a dated snapshot's
 * undated id), else that of the built-in row the id resolves to (an alias such as `claude-sonnet-4-0`).
 */
function overrideFor(byModel: ReadonlyMap<string, readonly Override[]>, provider: Provider, model: string, at: number) {
  const exact = inForceAt(byModel.get(model), at)
  if (exact) return exact
  const family = modelFamily(model)
  const ofFamily = family === model ? undefined : inForceAt(byModel.get(family), at)
  if (ofFamily) return ofFamily
  const row = priceFor(provider, model)?.model
  return row === undefined || row === model || row === family ? undefined : inForceAt(byModel.get(row), at)
}

/**
 * Prices for the gateway: an organisation's own prices over the built-in table. Each organisation's
 * overrides are read at most once a second per instance and indexed; a call then costs two map reads.
 */
export class PriceBook implements PriceSource {
  /** An organisation's overrides, indexed; while they are read, the read, so the calls that find them lapsed wait on one. */
  private readonly cache: TtlCache<string, OverrideIndex | Promise<OverrideIndex>>

  constructor(
    private readonly store: Store,
    private readonly now: Clock = Date.now,
  ) {
    this.cache = new TtlCache(100_000, OVERRIDE_CACHE_MS, now)
  }

  /** At once when the organisation's overrides are held (they are, but for a second's read in each). */
  priceOf(orgId: string, provider: Provider, model: string): ValueOrPromise<PricedModel | undefined> {
    const overrides = this.cache.held(orgId, () => this.store.org(orgId).modelPrices.list().then(indexOf))
    return overrides instanceof Promise
      ? overrides.then((index) => this.priceIn(index, provider, model))
      : this.priceIn(overrides, provider, model)
  }

  private priceIn(overrides: OverrideIndex, provider: Provider, model: string): PricedModel | undefined {
    const byModel = overrides.get(provider) ?? NO_OVERRIDES
    const override = byModel.size === 0 ? undefined : overrideFor(byModel, provider, model, this.now())
    if (!override) return builtinPrice(provider, model)
    const { priced } = override
    if (!override.inheritsMaxOutput || priced.price.model === model) return priced
    // A snapshot or alias may write more or less than the row the override names: its own maximum
    // keeps the worst-case estimate a bound.
    const own = priceFor(provider, model)?.maxOutputTokens
    return own === undefined || own === priced.price.maxOutputTokens
      ? priced
      : { ...priced, price: { ...priced.price, maxOutputTokens: own } }
  }

  /** Forgets an organisation's overrides on this instance: the next call reads them again. */
  forget(orgId: string): void {
    this.cache.delete(orgId)
  }
}
