import { isProviderName, type ProviderName } from './providers'

/**
 * Which providers serve a model known by its bare name, as data: its maker first, then the providers
 * that serve the same model under the same name (Vertex serves Gemini's; Azure serves OpenAI's under
 * the deployment an alias names). A model of no family here needs its provider named
 * (`groq/llama-3.3-70b-versatile`), as do the open models many providers host.
 */
export const MODEL_FAMILIES: ReadonlyArray<{ pattern: RegExp; providers: readonly [ProviderName, ...ProviderName[]] }> = [
  { pattern: /^claude-/, providers: ['anthropic'] },
  { pattern: /^gemini-/, providers: ['gemini', 'vertex'] },
  {
    pattern:
      /^(gpt-|chatgpt-|o[1-9](-|$)|text-embedding-|davinci-|babbage-|omni-moderation-|text-moderation-|codex-|dall-e-|tts-|whisper-)/,
    providers: ['openai', 'azure'],
  },
  { pattern: /^(mistral|magistral|codestral|devstral|ministral|pixtral)-/, providers: ['mistral'] },
  { pattern: /^deepseek-/, providers: ['deepseek'] },
  { pattern: /^grok-/, providers: ['xai'] },
]

/** The provider `<provider>/<model>` names: the part before the first slash, when it is a provider's name. */
export function providerPrefix(requested: string): ProviderName | undefined {
  const slash = requested.indexOf('/')
  if (slash <= 0) return undefined
  const name = requested.slice(0, slash)
  return isProviderName(name) ? name : undefined
}

/** The providers that may serve a bare model name, in the order they are preferred; none when no family claims it. */
export const providersOf = (model: string): readonly ProviderName[] =>
  MODEL_FAMILIES.find((family) => family.pattern.test(model))?.providers ?? []

/**
 * Providers that serve a bare name only where a connection maps that name to a model of theirs: an
 * Azure deployment has whatever name its owner gave it.
 */
export const SERVES_BY_ALIAS_ONLY: ReadonlySet<ProviderName> = new Set(['azure'])
