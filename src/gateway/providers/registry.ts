import { providerPrefix, providersOf, SERVES_BY_ALIAS_ONLY } from '../../directory/catalogue'
import type { OrgKeySource, OrgProviderKey } from '../../directory/connections'
import type { OperatorProviders, ProviderName } from '../../directory/providers'
import { ApiError } from '../../errors'
import type { ValueOrPromise } from '../../util/value-or-promise'
import { anthropic } from './anthropic'
import { bedrock } from './bedrock'
import { gemini } from './gemini'
import { azure, openaiCompatible, vendors } from './openai-compatible'
import type { ProviderAdapter } from './provider'
import { vertex } from './vertex'

/** Every provider gw can dispatch to. Static: `bun build --compile` cannot bundle computed imports. */
export const PROVIDERS: Record<ProviderName, ProviderAdapter> = {
  openai: openaiCompatible,
  anthropic,
  gemini,
  vertex,
  bedrock,
  azure,
  ...vendors,
}

/**
 * Whether the operator's connection to a provider can be called: its key is set, or it is a self-hosted
 * server that needs none (an OpenAI-compatible or Anthropic-compatible address of the operator's own).
 */
export function operatorConfigured(operator: OperatorProviders, name: ProviderName): boolean {
  const credentials = operator[name]
  return credentials !== undefined && (Boolean(credentials.apiKey) || !PROVIDERS[name].requiresKey(credentials))
}

export interface ResolvedModel {
  provider: ProviderAdapter
  /** The model id as callers name it at that provider (without a `provider/` prefix). */
  model: string
}

const unknownModel = (requested: string) =>
  new ApiError(
    'bad_request',
    `unknown model ${JSON.stringify(requested)}; name a known model, or force a provider with "<provider>/<model>" (${Object.keys(PROVIDERS).join(', ')})`,
    { details: { param: 'model' } },
  )

/** `<provider>/<model>`, when the part before the first slash names a provider: that provider, the rest its model. */
function named(requested: string): ResolvedModel | undefined {
  const name = providerPrefix(requested)
  const model = name === undefined ? '' : requested.slice(name.length + 1)
  return name !== undefined && model.length > 0 ? { provider: PROVIDERS[name], model } : undefined
}

/**
 * The provider a model name leads to whatever is configured: the one it names, else its maker. What
 * checks a name without a call in hand uses this (a fallback chain's steps); a call asks `ModelResolver`.
 */
export function resolveModel(requested: string): ResolvedModel {
  const maker = providersOf(requested)[0]
  const resolved = named(requested) ?? (maker ? { provider: PROVIDERS[maker], model: requested } : undefined)
  if (!resolved) throw unknownModel(requested)
  return resolved
}

/**
 * Which provider serves a call's model. A named provider is that one. A bare name goes to the first of
 * the providers that serve it (its maker first) for which the organisation has keys of its own, else
 * the first the operator configured; a provider that serves a name only by alias (Azure) must map it.
 * When none is configured, the maker: the call then says no key is configured for it.
 */
export class ModelResolver {
  constructor(
    private readonly operator: OperatorProviders,
    private readonly orgKeys: Pick<OrgKeySource, 'keysFor' | 'cachedKeysFor'>,
  ) {}

  /** Answered at once when nothing has to be read; a promise only when the organisation's keys must be. */
  resolve(orgId: string, requested: string): ValueOrPromise<ResolvedModel> {
    const explicit = named(requested)
    if (explicit) return explicit
    const candidates = providersOf(requested)
    const [maker] = candidates
    if (!maker) return Promise.reject(unknownModel(requested))
    if (candidates.length === 1) return { provider: PROVIDERS[maker], model: requested }
    return this.firstServing(orgId, requested, candidates, 0)
  }

  /**
   * The first candidate, from `from` on, for which the organisation has keys of its own (read through
   * the same short cache the call's keys are), else the first the operator configured, else the maker.
   */
  private firstServing(
    orgId: string,
    model: string,
    candidates: readonly ProviderName[],
    from: number,
  ): ValueOrPromise<ResolvedModel> {
    for (let index = from; index < candidates.length; index++) {
      const name = candidates[index] as ProviderName
      const cached = this.orgKeys.cachedKeysFor(orgId, name)
      if (cached === undefined)
        return this.orgKeys
          .keysFor(orgId, name)
          .then((keys) =>
            orgServes(name, model, keys)
              ? { provider: PROVIDERS[name], model }
              : this.firstServing(orgId, model, candidates, index + 1),
          )
      if (orgServes(name, model, cached)) return { provider: PROVIDERS[name], model }
    }
    const operator = candidates.find((name) => this.operatorServes(name, model))
    return { provider: PROVIDERS[operator ?? (candidates[0] as ProviderName)], model }
  }

  private operatorServes(name: ProviderName, model: string): boolean {
    if (!operatorConfigured(this.operator, name)) return false
    return !SERVES_BY_ALIAS_ONLY.has(name) || this.operator[name]?.models?.[model] !== undefined
  }
}

/** Whether an organisation's keys for a provider serve a model: any key does, except where only an alias can. */
const orgServes = (name: ProviderName, model: string, keys: readonly OrgProviderKey[]): boolean =>
  SERVES_BY_ALIAS_ONLY.has(name) ? keys.some((key) => key.settings?.models?.[model] !== undefined) : keys.length > 0
