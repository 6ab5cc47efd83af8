import type { ProviderName } from '../../directory/providers'
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
 * Which provider serves a model, by the model's name. Data, not code: a family is one row. A caller
 * forces a provider with `provider/model` (how a model on vLLM or Ollama behind OPENAI_BASE_URL is named).
 */
const MODEL_FAMILIES: ReadonlyArray<{ pattern: RegExp; provider: ProviderName }> = [
  { pattern: /^claude-/, provider: 'anthropic' },
  { pattern: /^gemini-/, provider: 'gemini' },
  {
    pattern:
      /^(gpt-|chatgpt-|o[1-9](-|$)|text-embedding-|davinci-|babbage-|omni-moderation-|text-moderation-|codex-|dall-e-|tts-|whisper-)/,
    provider: 'openai',
  },
]

export interface ResolvedModel {
  provider: ProviderAdapter
  /** The model id as the provider knows it (without a `provider/` prefix). */
  model: string
}

export function resolveModel(requested: string): ResolvedModel {
  const slash = requested.indexOf('/')
  if (slash > 0) {
    const name = requested.slice(0, slash)
    const model = requested.slice(slash + 1)
    if (Object.hasOwn(PROVIDERS, name) && model.length > 0) return { provider: PROVIDERS[name as ProviderName], model }
  }
  const family = MODEL_FAMILIES.find((f) => f.pattern.test(requested))
  if (!family) {
    throw new ApiError(
      'bad_request',
      `unknown model ${JSON.stringify(requested)}; name a known model, or force a provider with "<provider>/<model>" (${Object.keys(PROVIDERS).join(', ')})`,
      { details: { param: 'model' } },
    )
  }
  return { provider: PROVIDERS[family.provider], model: requested }
}
