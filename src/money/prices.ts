import type { ProviderName } from '../directory/providers'

/**
 * The built-in price table: list prices of the providers' standard (synchronous, default service
 * tier) APIs, as data.
 *
 * Unit: nano-USD per token. Providers publish USD per million tokens, and every price listed here is
 * a whole number of nano-USD per token ($2.50/M = 2500, $0.005/M = 5), so a cost is an exact integer
 * product with no rounding anywhere. A price that is not (say $0.0025/M) must not be rounded into the
 * table: the table test rejects it, and the unit has to become finer for every row instead.
 *
 * `asOf` is the day the row was checked against its `source`; a row is not evidence of any later price.
 */

/** What one token costs in each billing category, in nano-USD. */
export interface TokenRates {
  inputNanoPerToken: number
  outputNanoPerToken: number
  /** Absent: the provider bills cache reads as ordinary input. */
  cacheReadNanoPerToken?: number
  /** Absent: the provider bills cache writes as ordinary input. Anthropic rows carry the 5-minute write price. */
  cacheWriteNanoPerToken?: number
}

/**
 * Rates that replace the row's own for the whole request (output included) once the prompt, cached
 * parts included, is longer than `aboveInputTokens` (Anthropic's long-context pricing).
 */
export interface LongContextRates extends TokenRates {
  aboveInputTokens: number
}

export interface ModelPrice extends TokenRates {
  /** The provider whose name for the model this is (others that serve it are priced by `priceFor`'s rules). */
  provider: ProviderName
  /** The family id; dated snapshots of it (`-20250929`, `-2024-08-06`, `-latest`) resolve to this row. */
  model: string
  /** Undated ids the provider also serves this model under, which snapshot resolution cannot derive. */
  aliases?: readonly string[]
  longContext?: LongContextRates
  /** The most the model can write in one response; 0 for models that write no tokens (embeddings). */
  maxOutputTokens: number
  /** A fee per call on top of the tokens (some self-hosted or resold models bill so); organisation overrides set it. */
  perRequestNano?: number
  source: string
  /** YYYY-MM-DD */
  asOf: string
}

const CHECKED = '2026-11-22'
const openaiModelPage = (model: string) => `https://developers.openai.com/api/docs/models/${model}`
const OPENAI_PRICING = 'https://developers.openai.com/api/docs/pricing'
const ANTHROPIC_PRICING = 'https://platform.claude.com/docs/en/about-claude/pricing'
// The older models' rows are still listed on this copy of Anthropic's pricing page.
const ANTHROPIC_PRICING_LEGACY = 'https://docs.anthropic.com/en/docs/about-claude/pricing'
const anthropicModelPage = (slug: string) => `https://platform.claude.com/docs/en/models/${slug}/overview`

// Anthropic bills every token of a prompt above 200K tokens (Sonnet 4 and 4.5 with the 1M-token
// context window) at $6/M in and $22.50/M out, and the cache multipliers apply on top of those.
const SONNET_LONG_CONTEXT: LongContextRates = {
  aboveInputTokens: 200_000,
  inputNanoPerToken: 6_000,
  outputNanoPerToken: 22_500,
  cacheReadNanoPerToken: 600,
  cacheWriteNanoPerToken: 7_500,
}

export const PRICE_TABLE: readonly ModelPrice[] = [
  // OpenAI chat and reasoning models. OpenAI reports no cache writes, so no row has a write price.
  {
    provider: 'openai',
    model: 'gpt-4o',
    inputNanoPerToken: 2_500,
    cacheReadNanoPerToken: 1_250,
    outputNanoPerToken: 10_000,
    maxOutputTokens: 16_384,
    source: openaiModelPage('gpt-4o'),
    asOf: CHECKED,
  },
  {
    // The first gpt-4o snapshot kept its launch price, so it must not resolve to the family row.
    provider: 'openai',
    model: 'gpt-4o-2024-05-13',
    inputNanoPerToken: 5_000,
    outputNanoPerToken: 15_000,
    maxOutputTokens: 4_096,
    source: OPENAI_PRICING,
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-4o-mini',
    inputNanoPerToken: 150,
    cacheReadNanoPerToken: 75,
    outputNanoPerToken: 600,
    maxOutputTokens: 16_384,
    source: openaiModelPage('gpt-4o-mini'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-4.1',
    inputNanoPerToken: 2_000,
    cacheReadNanoPerToken: 500,
    outputNanoPerToken: 8_000,
    maxOutputTokens: 32_768,
    source: openaiModelPage('gpt-4.1'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-4.1-mini',
    inputNanoPerToken: 400,
    cacheReadNanoPerToken: 100,
    outputNanoPerToken: 1_600,
    maxOutputTokens: 32_768,
    source: openaiModelPage('gpt-4.1-mini'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-4.1-nano',
    inputNanoPerToken: 100,
    cacheReadNanoPerToken: 25,
    outputNanoPerToken: 400,
    maxOutputTokens: 32_768,
    source: openaiModelPage('gpt-4.1-nano'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'o1',
    inputNanoPerToken: 15_000,
    cacheReadNanoPerToken: 7_500,
    outputNanoPerToken: 60_000,
    maxOutputTokens: 100_000,
    source: openaiModelPage('o1'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'o3',
    inputNanoPerToken: 2_000,
    cacheReadNanoPerToken: 500,
    outputNanoPerToken: 8_000,
    maxOutputTokens: 100_000,
    source: openaiModelPage('o3'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'o3-mini',
    inputNanoPerToken: 1_100,
    cacheReadNanoPerToken: 550,
    outputNanoPerToken: 4_400,
    maxOutputTokens: 100_000,
    source: openaiModelPage('o3-mini'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'o4-mini',
    inputNanoPerToken: 1_100,
    cacheReadNanoPerToken: 275,
    outputNanoPerToken: 4_400,
    maxOutputTokens: 100_000,
    source: openaiModelPage('o4-mini'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-5',
    inputNanoPerToken: 1_250,
    cacheReadNanoPerToken: 125,
    outputNanoPerToken: 10_000,
    maxOutputTokens: 128_000,
    source: openaiModelPage('gpt-5'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-5-mini',
    inputNanoPerToken: 250,
    cacheReadNanoPerToken: 25,
    outputNanoPerToken: 2_000,
    maxOutputTokens: 128_000,
    source: openaiModelPage('gpt-5-mini'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'gpt-5-nano',
    inputNanoPerToken: 50,
    cacheReadNanoPerToken: 5,
    outputNanoPerToken: 400,
    maxOutputTokens: 128_000,
    source: openaiModelPage('gpt-5-nano'),
    asOf: CHECKED,
  },

  // OpenAI embeddings: billed on input only.
  {
    provider: 'openai',
    model: 'text-embedding-3-small',
    inputNanoPerToken: 20,
    outputNanoPerToken: 0,
    maxOutputTokens: 0,
    source: openaiModelPage('text-embedding-3-small'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'text-embedding-3-large',
    inputNanoPerToken: 130,
    outputNanoPerToken: 0,
    maxOutputTokens: 0,
    source: openaiModelPage('text-embedding-3-large'),
    asOf: CHECKED,
  },
  {
    provider: 'openai',
    model: 'text-embedding-ada-002',
    inputNanoPerToken: 100,
    outputNanoPerToken: 0,
    maxOutputTokens: 0,
    source: openaiModelPage('text-embedding-ada-002'),
    asOf: CHECKED,
  },

  // Anthropic: 5-minute cache writes cost 1.25x input, cache reads 0.1x input.
  {
    provider: 'anthropic',
    model: 'claude-3-5-sonnet',
    inputNanoPerToken: 3_000,
    cacheWriteNanoPerToken: 3_750,
    cacheReadNanoPerToken: 300,
    outputNanoPerToken: 15_000,
    maxOutputTokens: 8_192,
    source: ANTHROPIC_PRICING_LEGACY,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-3-5-haiku',
    inputNanoPerToken: 800,
    cacheWriteNanoPerToken: 1_000,
    cacheReadNanoPerToken: 80,
    outputNanoPerToken: 4_000,
    maxOutputTokens: 8_192,
    source: ANTHROPIC_PRICING_LEGACY,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-3-7-sonnet',
    inputNanoPerToken: 3_000,
    cacheWriteNanoPerToken: 3_750,
    cacheReadNanoPerToken: 300,
    outputNanoPerToken: 15_000,
    // 64K by default, but the `output-128k-2025-02-19` beta header lets a request ask for 128K;
    // a smaller cap would let the worst-case estimate fall short of such a request.
    maxOutputTokens: 128_000,
    source: ANTHROPIC_PRICING_LEGACY,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4',
    aliases: ['claude-sonnet-4-0'],
    inputNanoPerToken: 3_000,
    cacheWriteNanoPerToken: 3_750,
    cacheReadNanoPerToken: 300,
    outputNanoPerToken: 15_000,
    longContext: SONNET_LONG_CONTEXT,
    maxOutputTokens: 64_000,
    source: ANTHROPIC_PRICING_LEGACY,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-4',
    aliases: ['claude-opus-4-0'],
    inputNanoPerToken: 15_000,
    cacheWriteNanoPerToken: 18_750,
    cacheReadNanoPerToken: 1_500,
    outputNanoPerToken: 75_000,
    maxOutputTokens: 32_000,
    source: ANTHROPIC_PRICING,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-4-1',
    inputNanoPerToken: 15_000,
    cacheWriteNanoPerToken: 18_750,
    cacheReadNanoPerToken: 1_500,
    outputNanoPerToken: 75_000,
    maxOutputTokens: 32_000,
    source: ANTHROPIC_PRICING,
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    inputNanoPerToken: 3_000,
    cacheWriteNanoPerToken: 3_750,
    cacheReadNanoPerToken: 300,
    outputNanoPerToken: 15_000,
    longContext: SONNET_LONG_CONTEXT,
    maxOutputTokens: 64_000,
    source: anthropicModelPage('sonnet-4-5'),
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    inputNanoPerToken: 1_000,
    cacheWriteNanoPerToken: 1_250,
    cacheReadNanoPerToken: 100,
    outputNanoPerToken: 5_000,
    maxOutputTokens: 64_000,
    source: anthropicModelPage('haiku-4-5'),
    asOf: CHECKED,
  },
  {
    provider: 'anthropic',
    model: 'claude-opus-4-5',
    inputNanoPerToken: 5_000,
    cacheWriteNanoPerToken: 6_250,
    cacheReadNanoPerToken: 500,
    outputNanoPerToken: 25_000,
    maxOutputTokens: 64_000,
    source: ANTHROPIC_PRICING,
    asOf: CHECKED,
  },
  // Google's list price for the Gemini API's standard tier, as models.dev records it; thinking is
  // billed as output, which is where gw counts it. Google has deprecated 2.5 Flash (its shutdown date
  // is not confirmed): check the row against Google's pricing page before it prices a customer's call.
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    inputNanoPerToken: 300,
    cacheReadNanoPerToken: 30,
    outputNanoPerToken: 2_500,
    maxOutputTokens: 65_536,
    source:
      'https://github.com/anomalyco/models.dev/blob/0760ceffd3e02115e6480d9a0be7992c330c2f35/providers/google/models/gemini-2.5-flash.toml',
    asOf: '2026-06-15',
  },
]
