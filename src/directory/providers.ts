import type { ConnectionSettings } from '../store/json-columns'

/**
 * Every provider gw calls, as data: the name callers use for it (`<provider>/<model>`, Gw-Provider, a
 * provider key's `provider`), the protocol it is called by, and the conventional environment variables
 * an operator sets for it. A provider's code (where a call goes, how it is authenticated) is in
 * `src/gateway/providers/`; everything else that lists providers reads this table.
 */

/**
 * One place to send calls, as the gateway needs it: a base URL and what authenticates there. Which
 * fields a provider reads depends on its kind; the rest stay absent.
 */
export interface ProviderCredentials extends ConnectionSettings {
  /**
   * The secret: an API key (a bearer token, Azure's `api-key`, Gemini's `x-goog-api-key`), Bedrock's
   * secret access key, or Vertex's service account (its JSON key file).
   */
  apiKey?: string
  baseUrl: string
  /**
   * The base URL is an organisation's own (its provider key's), not the operator's: calls to it pass
   * the egress policy like any other address a user configures.
   */
  organizationBaseUrl?: boolean
  /**
   * The credentials are an organisation's own key: what they lead to besides the base URL (a service
   * account's token endpoint) is the organisation's choice too, and passes the egress policy.
   */
  organizationKey?: boolean
  /** Bedrock: a session token, for the operator's temporary credentials. */
  sessionToken?: string
}

/** How a provider is called: its wire protocol, and how it is reached and authenticated. */
export const PROVIDER_KINDS = ['openai-compatible', 'anthropic', 'gemini', 'vertex', 'bedrock', 'azure'] as const
export type ProviderKind = (typeof PROVIDER_KINDS)[number]

export interface ProviderSpec {
  kind: ProviderKind
  /** What a person calls it. */
  label: string
  /** Where it is when the operator names no base URL. */
  defaultBaseUrl: string
  /** An OpenAI-compatible server that refuses `stream_options` (and reports a stream's usage at its end anyway). */
  noStreamOptions?: true
  /** An OpenAI-compatible server that refuses a tool call id other than nine letters and digits. */
  nineCharacterToolCallIds?: true
}

/** The OpenAI-compatible vendors gw knows by name: their API at their own address, a bearer key. */
const openaiCompatible = (label: string, defaultBaseUrl: string, extra: Partial<ProviderSpec> = {}): ProviderSpec => ({
  kind: 'openai-compatible',
  label,
  defaultBaseUrl,
  ...extra,
})

/** The OpenAI-compatible vendors besides OpenAI itself: each on with `<NAME>_API_KEY`, at `<NAME>_BASE_URL`. */
const VENDORS = {
  mistral: openaiCompatible('Mistral', 'https://api.mistral.ai/v1', { noStreamOptions: true, nineCharacterToolCallIds: true }),
  groq: openaiCompatible('Groq', 'https://api.groq.com/openai/v1'),
  deepseek: openaiCompatible('DeepSeek', 'https://api.deepseek.com/v1'),
  xai: openaiCompatible('xAI', 'https://api.x.ai/v1'),
  together: openaiCompatible('Together AI', 'https://api.together.xyz/v1'),
  fireworks: openaiCompatible('Fireworks AI', 'https://api.fireworks.ai/inference/v1'),
  openrouter: openaiCompatible('OpenRouter', 'https://openrouter.ai/api/v1'),
  cerebras: openaiCompatible('Cerebras', 'https://api.cerebras.ai/v1'),
} as const satisfies Record<string, ProviderSpec>

export type VendorName = keyof typeof VENDORS
export const VENDOR_NAMES = Object.keys(VENDORS) as VendorName[]

export const PROVIDERS_TABLE = {
  openai: openaiCompatible('OpenAI (or any OpenAI-compatible server: vLLM, Ollama, llama.cpp)', 'https://api.openai.com/v1'),
  anthropic: { kind: 'anthropic', label: 'Anthropic', defaultBaseUrl: 'https://api.anthropic.com' },
  gemini: { kind: 'gemini', label: 'Google Gemini API', defaultBaseUrl: 'https://generativelanguage.googleapis.com' },
  // Vertex and Bedrock are regional: their host is made from the location or region unless one is named.
  vertex: { kind: 'vertex', label: 'Google Vertex AI (Gemini and Claude)', defaultBaseUrl: '' },
  bedrock: { kind: 'bedrock', label: 'AWS Bedrock', defaultBaseUrl: '' },
  // An Azure resource has its own endpoint; there is no default.
  azure: { kind: 'azure', label: 'Azure OpenAI', defaultBaseUrl: '' },
  ...VENDORS,
} as const satisfies Record<string, ProviderSpec>

export type ProviderName = keyof typeof PROVIDERS_TABLE
/** Every provider's name, in the table's order (a tuple, as schemas of one of them want). */
export const PROVIDER_NAMES = Object.keys(PROVIDERS_TABLE) as [ProviderName, ...ProviderName[]]

export const isProviderName = (name: string): name is ProviderName => Object.hasOwn(PROVIDERS_TABLE, name)

/**
 * Where a provider is when neither the key nor the operator names an address: its public API, or for
 * the regional ones (Bedrock, Vertex) the host of the key's region or location.
 */
export function defaultBaseUrl(provider: ProviderName, credentials: Pick<ProviderCredentials, 'region' | 'location'>): string {
  if (provider === 'bedrock') return `https://bedrock-runtime.${credentials.region ?? 'us-east-1'}.amazonaws.com`
  if (provider === 'vertex') {
    const location = credentials.location ?? 'global'
    return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`
  }
  return PROVIDERS_TABLE[provider].defaultBaseUrl
}

/** The operator's own connections: OpenAI's and Anthropic's always (a self-hosted server may need no key), the others when configured. */
export type OperatorProviders = Record<'openai' | 'anthropic', ProviderCredentials> &
  Partial<Record<ProviderName, ProviderCredentials>>
