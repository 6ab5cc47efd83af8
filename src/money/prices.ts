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

// models.dev (github.com/anomalyco/models.dev) as of one commit, so every row it sources names the
// file it was read from and the date of that commit.
const MODELS_DEV_SNAPSHOT = 'f3fc692299671838c7c65fd8126bf84d81a2e817'
const MODELS_DEV_SNAPSHOT_DATE = '2026-07-02'
const modelsDevAt = (commit: string, path: string) => `https://github.com/anomalyco/models.dev/blob/${commit}/${path}`
const modelsDev = (path: string) => modelsDevAt(MODELS_DEV_SNAPSHOT, path)
// Later models.dev commits (their dates were not reachable) carry Mistral files that record their
// authors read Mistral's model and pricing pages on this day; rows read from them carry it.
const MISTRAL_REFRESH_CHECKED = '2026-08-27'

// Google bills every token of a prompt above 200K tokens, output included, at the higher rates.
const GEMINI_2_5_PRO_LONG_CONTEXT: LongContextRates = {
  aboveInputTokens: 200_000,
  inputNanoPerToken: 2_500,
  outputNanoPerToken: 15_000,
  cacheReadNanoPerToken: 250,
}
const GEMINI_3_1_PRO_LONG_CONTEXT: LongContextRates = {
  aboveInputTokens: 200_000,
  inputNanoPerToken: 4_000,
  outputNanoPerToken: 18_000,
  cacheReadNanoPerToken: 400,
}
// xAI bills a request whose prompt is above 200K tokens at double rates (Grok 4.3 and 4.20).
const GROK_LONG_CONTEXT: LongContextRates = {
  aboveInputTokens: 200_000,
  inputNanoPerToken: 2_500,
  outputNanoPerToken: 5_000,
  cacheReadNanoPerToken: 400,
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
  // Google's Gemini API, standard (paid) tier, as models.dev records it: Google's own pricing page was
  // not within reach to cross-check. Vertex Gemini calls are priced by these rows. Thinking tokens are
  // billed as output, which is where gw counts them. Not modelled: the cache storage fee per hour,
  // and audio input, which Google prices above text (2.5 Flash $1.00/M, 2.5 Flash-Lite $0.30/M,
  // 3.1 Flash-Lite $0.50/M). Google has deprecated 2.5 Pro and 2.5 Flash; a third-party reading of its
  // deprecations page puts their shutdown at 2026-12-01, after which the ids are served, and billed, as
  // newer models: check these two rows then. Gone already, so not listed: gemini-2.0-flash and
  // -flash-lite (shut down 2026-06-01), gemini-3-pro-preview (2026-03-09, succeeded by 3.1 Pro Preview).
  {
    provider: 'gemini',
    model: 'gemini-2.5-pro',
    inputNanoPerToken: 1_250,
    cacheReadNanoPerToken: 125,
    outputNanoPerToken: 10_000,
    longContext: GEMINI_2_5_PRO_LONG_CONTEXT,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-2.5-pro.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    inputNanoPerToken: 300,
    cacheReadNanoPerToken: 30,
    outputNanoPerToken: 2_500,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-2.5-flash.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash-lite',
    inputNanoPerToken: 100,
    cacheReadNanoPerToken: 10,
    outputNanoPerToken: 400,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-2.5-flash-lite.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-3.1-pro-preview',
    inputNanoPerToken: 2_000,
    cacheReadNanoPerToken: 200,
    outputNanoPerToken: 12_000,
    longContext: GEMINI_3_1_PRO_LONG_CONTEXT,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-3.1-pro-preview.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-3.5-flash',
    inputNanoPerToken: 1_500,
    cacheReadNanoPerToken: 150,
    outputNanoPerToken: 9_000,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-3.5-flash.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-3.1-flash-lite',
    inputNanoPerToken: 250,
    cacheReadNanoPerToken: 25,
    outputNanoPerToken: 1_500,
    maxOutputTokens: 65_536,
    source: modelsDev('providers/google/models/gemini-3.1-flash-lite.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'gemini',
    model: 'gemini-embedding-001',
    inputNanoPerToken: 150,
    outputNanoPerToken: 0,
    maxOutputTokens: 0,
    source: modelsDev('providers/google/models/gemini-embedding-001.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },

  // Mistral, as models.dev records it: from the snapshot above, or (rows dated 2026-08-27) from
  // later models.dev files whose authors re-read Mistral's model pages and pricing page that day
  // (their commit dates were not reachable). Mistral's own pricing page was not within reach. The
  // `-latest` ids resolve to the undated family rows and move when Mistral re-points them: Large is
  // Large 3, Medium is Medium 3.5 (in June models.dev still had medium-latest on Medium 3.1 at
  // $0.40/$2), Small is Small 4. Dated ids are aliases only where the source gives the same price.
  // Cache reads carry a price only where the source lists one; elsewhere they cost ordinary input.
  // Reasoning (Magistral, Medium 3.5, Small 4) is billed as output. Not listed: Devstral (models.dev
  // marks every Devstral id deprecated) and Magistral (magistral-small-latest now resolves to Small 4
  // and the Magistral prices were not re-checked since 2025).
  {
    provider: 'mistral',
    model: 'mistral-large',
    aliases: ['mistral-large-2512'],
    inputNanoPerToken: 500,
    outputNanoPerToken: 1_500,
    maxOutputTokens: 262_144,
    source: modelsDev('providers/mistral/models/mistral-large-latest.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    // Mistral Large 2.1: its dated id keeps its own, higher price.
    provider: 'mistral',
    model: 'mistral-large-2411',
    inputNanoPerToken: 2_000,
    outputNanoPerToken: 6_000,
    maxOutputTokens: 16_384,
    source: modelsDev('providers/mistral/models/mistral-large-2411.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'mistral',
    model: 'mistral-medium',
    aliases: ['mistral-medium-2604', 'mistral-medium-3.5'],
    inputNanoPerToken: 1_500,
    outputNanoPerToken: 7_500,
    maxOutputTokens: 262_144,
    source: modelsDevAt('e12e93b7a4e4b9a7ca119cf4807a0e7acee8f5c0', 'providers/mistral/models/mistral-medium.toml'),
    asOf: MISTRAL_REFRESH_CHECKED,
  },
  {
    // Mistral Medium 3.1; Medium 3 (2505) is listed at the same price.
    provider: 'mistral',
    model: 'mistral-medium-2508',
    aliases: ['mistral-medium-2505'],
    inputNanoPerToken: 400,
    outputNanoPerToken: 2_000,
    maxOutputTokens: 262_144,
    source: modelsDev('providers/mistral/models/mistral-medium-2508.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'mistral',
    model: 'mistral-small',
    aliases: ['mistral-small-2603'],
    inputNanoPerToken: 150,
    outputNanoPerToken: 600,
    maxOutputTokens: 256_000,
    source: modelsDev('providers/mistral/models/mistral-small-latest.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    // Mistral Small 3.2.
    provider: 'mistral',
    model: 'mistral-small-2506',
    inputNanoPerToken: 100,
    outputNanoPerToken: 300,
    maxOutputTokens: 16_384,
    source: modelsDev('providers/mistral/models/mistral-small-2506.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    // The source says codestral-latest resolves to codestral-2508.
    provider: 'mistral',
    model: 'codestral',
    aliases: ['codestral-2508'],
    inputNanoPerToken: 300,
    cacheReadNanoPerToken: 30,
    outputNanoPerToken: 900,
    maxOutputTokens: 128_000,
    source: modelsDevAt('d87c8d022444bd698913af216ec2f6205f740f7b', 'providers/mistral/models/codestral-2508.toml'),
    asOf: MISTRAL_REFRESH_CHECKED,
  },
  {
    // Ministral 3 8B. Which model ministral-8b-latest names now is not in the source, so it is not priced.
    provider: 'mistral',
    model: 'ministral-8b-2512',
    inputNanoPerToken: 150,
    cacheReadNanoPerToken: 15,
    outputNanoPerToken: 150,
    maxOutputTokens: 256_000,
    source: modelsDevAt('ca42ed5bea33c0e66e8fd6e664da85285500d03e', 'providers/mistral/models/ministral-8b-2512.toml'),
    asOf: MISTRAL_REFRESH_CHECKED,
  },
  {
    // Ministral 3 3B; ministral-3b-latest is left unpriced for the same reason.
    provider: 'mistral',
    model: 'ministral-3b-2512',
    inputNanoPerToken: 100,
    cacheReadNanoPerToken: 10,
    outputNanoPerToken: 100,
    maxOutputTokens: 256_000,
    source: modelsDevAt('e12e93b7a4e4b9a7ca119cf4807a0e7acee8f5c0', 'providers/mistral/models/ministral-3b-2512.toml'),
    asOf: MISTRAL_REFRESH_CHECKED,
  },
  {
    provider: 'mistral',
    model: 'pixtral-large',
    inputNanoPerToken: 2_000,
    outputNanoPerToken: 6_000,
    maxOutputTokens: 128_000,
    source: modelsDev('providers/mistral/models/pixtral-large-latest.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },

  // xAI, as models.dev records it; xAI's Grok 4.3 page agrees on $1.25 in, $0.20 cached, $2.50 out
  // and says prompts over 200K tokens cost more (the tier's rates are models.dev's). xAI retired
  // grok-4-0709, grok-3, grok-code-fast-1 and the grok-4(-1)-fast ids on 2026-05-15; its migration
  // guide (https://docs.x.ai/developers/migration/may-15-retirement) says those ids now run on
  // grok-4.3 and are billed at its prices, so they are its aliases. Reasoning tokens are billed as
  // output. Not listed: grok-3-mini (dropped by models.dev with the retired models, not in xAI's
  // redirect list) and the newer grok-4.5/4.6/4.7 (no dated source read for them).
  {
    provider: 'xai',
    model: 'grok-4.3',
    aliases: [
      'grok-4-0709',
      'grok-4-fast-reasoning',
      'grok-4-fast-non-reasoning',
      'grok-4-1-fast-reasoning',
      'grok-4-1-fast-non-reasoning',
      'grok-code-fast-1',
      'grok-3',
    ],
    inputNanoPerToken: 1_250,
    cacheReadNanoPerToken: 200,
    outputNanoPerToken: 2_500,
    longContext: GROK_LONG_CONTEXT,
    maxOutputTokens: 30_000,
    source: modelsDev('providers/xai/models/grok-4.3.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'xai',
    model: 'grok-4.20-0309-reasoning',
    inputNanoPerToken: 1_250,
    cacheReadNanoPerToken: 200,
    outputNanoPerToken: 2_500,
    longContext: GROK_LONG_CONTEXT,
    maxOutputTokens: 30_000,
    source: modelsDev('providers/xai/models/grok-4.20-0309-reasoning.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
  {
    provider: 'xai',
    model: 'grok-4.20-0309-non-reasoning',
    inputNanoPerToken: 1_250,
    cacheReadNanoPerToken: 200,
    outputNanoPerToken: 2_500,
    longContext: GROK_LONG_CONTEXT,
    maxOutputTokens: 30_000,
    source: modelsDev('providers/xai/models/grok-4.20-0309-non-reasoning.toml'),
    asOf: MODELS_DEV_SNAPSHOT_DATE,
  },
]
