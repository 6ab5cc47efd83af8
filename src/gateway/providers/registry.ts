import { providersOf, SERVES_BY_ALIAS_ONLY } from '../../directory/catalogue'
import type { OrgKeySource } from '../../directory/connections'
import { isProviderName, type OperatorProviders, type ProviderName } from '../../directory/providers'
import { ApiError } from '../../errors'
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
  const slash = requested.indexOf('/')
  if (slash <= 0) return undefined
  const name = requested.slice(0, slash)
  const model = requested.slice(slash + 1)
  return isProviderName(name) && model.length > 0 ? { provider: PROVIDERS[name], model } : undefined
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
    private readonly orgKeys: Pick<OrgKeySource, 'keysFor'>,
  ) {}

  async resolve(orgId: string, requested: string): Promise<ResolvedModel> {
    const explicit = named(requested)
    if (explicit) return explicit
    const candidates = providersOf(requested)
    const [maker] = candidates
    if (!maker) throw unknownModel(requested)
    if (candidates.length === 1) return { provider: PROVIDERS[maker], model: requested }
    // The organisation's own keys are read through the same short cache the call's keys are.
    for (const name of candidates)
      if (await this.orgServes(orgId, name, requested)) return { provider: PROVIDERS[name], model: requested }
    const operator = candidates.find((name) => this.operatorServes(name, requested))
    return { provider: PROVIDERS[operator ?? maker], model: requested }
  }

  private operatorServes(name: ProviderName, model: string): boolean {
    if (!operatorConfigured(this.operator, name)) return false
    return !SERVES_BY_ALIAS_ONLY.has(name) || this.operator[name]?.models?.[model] !== undefined
  }

  private async orgServes(orgId: string, name: ProviderName, model: string): Promise<boolean> {
    const keys = await this.orgKeys.keysFor(orgId, name)
    return SERVES_BY_ALIAS_ONLY.has(name) ? keys.some((key) => key.settings?.models?.[model] !== undefined) : keys.length > 0
  }
}
