import type { ProviderName } from '../directory/providers'
import { type ModelPrice, PRICE_TABLE, type TokenRates } from './prices'
import type { Usage } from './usage'

/**
 * Built once at load so the per-request lookup is two map reads. A duplicate id would make the price
 * depend on table order, so it stops start-up instead.
 */
const INDEX: ReadonlyMap<ProviderName, ReadonlyMap<string, ModelPrice>> = (() => {
  const index = new Map<ProviderName, Map<string, ModelPrice>>()
  for (const row of PRICE_TABLE) {
    const rows = index.get(row.provider) ?? new Map<string, ModelPrice>()
    index.set(row.provider, rows)
    for (const id of [row.model, ...(row.aliases ?? [])]) {
      if (rows.has(id)) throw new Error(`price table: ${row.provider} model ${id} is listed twice`)
      rows.set(id, row)
    }
  }
  return index
})()

/** A Bedrock model id of Anthropic's: `anthropic.<id>-v1:0`, behind a cross-region prefix (`us.`, `global.`) or not. */
const BEDROCK_ANTHROPIC = /^(?:[a-z]+\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$/

/**
 * Which rows price a model that a provider serves under its own name: Azure deploys OpenAI's models,
 * Vertex serves Gemini's and Anthropic's (`claude-sonnet-4-5@20250929`), Bedrock Anthropic's among
 * others; their list prices are their makers'. Anything else is priced by the provider's own rows.
 */
function pricedAs(provider: ProviderName, model: string): [ProviderName, string] | undefined {
  if (provider === 'azure') return ['openai', model]
  if (provider === 'vertex') return model.startsWith('claude') ? ['anthropic', model.replace('@', '-')] : ['gemini', model]
  const anthropic = provider === 'bedrock' ? BEDROCK_ANTHROPIC.exec(model)?.[1] : undefined
  return anthropic === undefined ? undefined : ['anthropic', anthropic]
}

/**
 * Anthropic dates snapshots as `-YYYYMMDD`, OpenAI as `-YYYY-MM-DD`; `-latest` is Anthropic's moving
 * alias. Only these suffixes are stripped: a bare prefix match would price `claude-opus-4-6` as
 * `claude-opus-4`, a guess at a model whose price is not in the table.
 */
const SNAPSHOT_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/

/** The family a dated snapshot belongs to (`gpt-4o-2024-08-06` -> `gpt-4o`); any other id is its own family. */
export const modelFamily = (model: string): string => model.replace(SNAPSHOT_SUFFIX, '')

/**
 * The price row for a model id: the id itself (or an alias), else the family a dated snapshot belongs
 * to. Stripping the one snapshot suffix leaves exactly the longest family prefix, so
 * `gpt-4o-mini-2024-07-18` is gpt-4o-mini and never gpt-4o. Unknown ids are undefined, never guessed.
 */
export function priceFor(provider: ProviderName, model: string): ModelPrice | undefined {
  const own = rowFor(provider, model)
  if (own) return own
  const maker = pricedAs(provider, model)
  return maker && rowFor(...maker)
}

function rowFor(provider: ProviderName, model: string): ModelPrice | undefined {
  const rows = INDEX.get(provider)
  const exact = rows?.get(model)
  if (exact) return exact
  const family = modelFamily(model)
  return family === model ? undefined : rows?.get(family)
}

/** The rates that apply to a request whose prompt (cached parts included) has this many tokens. */
function ratesFor(price: ModelPrice, promptTokens: number): TokenRates {
  const long = price.longContext
  return long && promptTokens > long.aboveInputTokens ? long : price
}

/**
 * What the provider charges for this usage, in nano-USD. Every rate of the built-in table is a whole
 * number of nano-USD per token, so its costs are exact; an organisation's override may price a token
 * at a fraction of a nano-USD, and the total is rounded to the nearest one.
 */
export function costNano(price: ModelPrice, usage: Usage): number {
  const rates = ratesFor(price, usage.promptTokens)
  // An adapter that reports more cached tokens than prompt tokens is wrong, but must not refund input.
  const uncached = Math.max(0, usage.promptTokens - usage.cacheReadTokens - usage.cacheWriteTokens)
  return Math.round(
    uncached * rates.inputNanoPerToken +
      usage.cacheReadTokens * (rates.cacheReadNanoPerToken ?? rates.inputNanoPerToken) +
      usage.cacheWriteTokens * (rates.cacheWriteNanoPerToken ?? rates.inputNanoPerToken) +
      usage.completionTokens * rates.outputNanoPerToken +
      (price.perRequestNano ?? 0),
  )
}

/** The most output a request can be billed for: what it asks, never above what the model can write. */
function outputTokensBound(price: Pick<ModelPrice, 'maxOutputTokens'>, requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return price.maxOutputTokens
  return Math.min(Math.max(0, Math.ceil(requested)), price.maxOutputTokens)
}

/**
 * The most a request can cost, known before it is sent, in nano-USD.
 *
 * Why it bounds the real cost: every token the provider bills as prompt comes from the body, a token
 * covers at least one byte, and JSON only adds bytes (keys, quotes, escapes), so the prompt has at
 * most `bodyBytes` tokens. Each is priced at the dearest input-side rate of the row (input or cache
 * write; a token can be billed in only one category), and, when the body is long enough to reach a
 * long-context tier, at that tier's rates, which are never lower. The response cannot exceed the
 * output cap the request sets, nor the model's own maximum.
 *
 * What it assumes, so a caller knows where it stops holding: the prompt travels in the body (not by
 * reference: `previous_response_id`, file ids, stored prompts, image or document URLs); one choice is
 * generated (OpenAI's `n` multiplies output); images are not among the inputs (some models bill an
 * image at more tokens than its encoded bytes); cache writes are 5-minute ones; the provider adds no
 * hidden system prompt (Anthropic adds one when tools are present); and the default service tier.
 */
export function estimateNano(price: ModelPrice, request: { bodyBytes: number; maxOutputTokens?: number }): number {
  const promptTokens = Math.max(0, Math.ceil(request.bodyBytes))
  const rates = ratesFor(price, promptTokens)
  const inputRate = Math.max(rates.inputNanoPerToken, rates.cacheWriteNanoPerToken ?? 0, rates.cacheReadNanoPerToken ?? 0)
  return Math.ceil(
    promptTokens * inputRate +
      outputTokensBound(price, request.maxOutputTokens) * rates.outputNanoPerToken +
      (price.perRequestNano ?? 0),
  )
}

/** The most tokens (prompt and output) a request can be billed for, by the same reasoning as `estimateNano`. */
export const estimateTokens = (
  price: Pick<ModelPrice, 'maxOutputTokens'>,
  request: { bodyBytes: number; maxOutputTokens?: number },
) => Math.max(0, Math.ceil(request.bodyBytes)) + outputTokensBound(price, request.maxOutputTokens)

export const NANO_PER_USD = 1_000_000_000

/** For the API, which shows USD; stored and summed amounts stay integer nano-USD. */
export const nanoToUsd = (nano: number): number => nano / NANO_PER_USD
