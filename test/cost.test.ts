import { describe, expect, test } from 'bun:test'
import { costNano, estimateNano, nanoToUsd, priceFor } from '../src/money/cost'
import { type ModelPrice, PRICE_TABLE, type TokenRates } from '../src/money/prices'
import { UNIT_PRICES, unitPriceFor, unitsCostNano } from '../src/money/unit-prices'
import type { Usage } from '../src/money/usage'

const usage = (partial: Partial<Usage>): Usage => ({
  promptTokens: 0,
  completionTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...partial,
})

const known = (provider: ModelPrice['provider'], model: string): ModelPrice => {
  const price = priceFor(provider, model)
  if (!price) throw new Error(`no price for ${provider} ${model}`)
  return price
}

describe('costNano (hand-computed figures)', () => {
  test('gpt-4o: 1,000 prompt tokens of which 400 cached, 500 completion', () => {
    // 600 x 2,500 + 400 x 1,250 + 500 x 10,000 nano-USD
    const cost = costNano(known('openai', 'gpt-4o'), usage({ promptTokens: 1_000, cacheReadTokens: 400, completionTokens: 500 }))
    expect(cost).toBe(7_000_000)
    expect(nanoToUsd(cost)).toBe(0.007)
  })

  test('claude-sonnet-4-5 with cache reads and 5-minute cache writes', () => {
    // 1,000 x 3,000 + 6,000 x 300 + 3,000 x 3,750 + 2,000 x 15,000 nano-USD
    const cost = costNano(
      known('anthropic', 'claude-sonnet-4-5-20250929'),
      usage({ promptTokens: 10_000, cacheReadTokens: 6_000, cacheWriteTokens: 3_000, completionTokens: 2_000 }),
    )
    expect(cost).toBe(46_050_000)
    expect(nanoToUsd(cost)).toBe(0.04605)
  })

  test('a prompt over 200K tokens puts the whole Sonnet request on long-context rates; 200K exactly does not', () => {
    const sonnet = known('anthropic', 'claude-sonnet-4-5')
    // 100,000 x 6,000 + 100,000 x 600 + 50,001 x 7,500 + 1,000 x 22,500
    expect(
      costNano(
        sonnet,
        usage({ promptTokens: 250_001, cacheReadTokens: 100_000, cacheWriteTokens: 50_001, completionTokens: 1_000 }),
      ),
    ).toBe(1_057_507_500)
    // 200,000 x 3,000 + 1,000 x 15,000
    expect(costNano(sonnet, usage({ promptTokens: 200_000, completionTokens: 1_000 }))).toBe(615_000_000)
  })

  test('a prompt over 200K tokens puts the whole Gemini 2.5 Pro request on long-context rates; 200K exactly does not', () => {
    const pro = known('gemini', 'gemini-2.5-pro')
    // 200,000 x 2,500 + 50,000 x 250 + 1,000 x 15,000
    expect(costNano(pro, usage({ promptTokens: 250_000, cacheReadTokens: 50_000, completionTokens: 1_000 }))).toBe(527_500_000)
    // 200,000 x 1,250 + 1,000 x 10,000
    expect(costNano(pro, usage({ promptTokens: 200_000, completionTokens: 1_000 }))).toBe(260_000_000)
  })

  test('grok-4.3 with cache reads, and above 200K prompt tokens at its long-context rates', () => {
    const grok = known('xai', 'grok-4.3')
    // 600 x 1,250 + 400 x 200 + 500 x 2,500
    expect(costNano(grok, usage({ promptTokens: 1_000, cacheReadTokens: 400, completionTokens: 500 }))).toBe(2_080_000)
    // 200,001 x 2,500 + 1,000 x 5,000
    expect(costNano(grok, usage({ promptTokens: 200_001, completionTokens: 1_000 }))).toBe(505_002_500)
  })

  test('cache tokens fall back to the input price when the row has no cache price', () => {
    const bare: ModelPrice = {
      provider: 'openai',
      model: 'bare',
      inputNanoPerToken: 7,
      outputNanoPerToken: 11,
      maxOutputTokens: 10,
      source: 'https://example.com',
      asOf: '2026-01-01',
    }
    expect(costNano(bare, usage({ promptTokens: 10, cacheReadTokens: 3, cacheWriteTokens: 2, completionTokens: 1 }))).toBe(81)
  })

  test('embeddings cost input only', () => {
    expect(costNano(known('openai', 'text-embedding-3-small'), usage({ promptTokens: 1_000 }))).toBe(20_000)
  })

  test('more cached tokens than prompt tokens never refunds input', () => {
    // 0 x 2,500 + 500 x 1,250
    expect(costNano(known('openai', 'gpt-4o'), usage({ promptTokens: 400, cacheReadTokens: 500 }))).toBe(625_000)
  })
})

describe('priceFor', () => {
  test('dated snapshots and -latest resolve to their family; the longest family wins', () => {
    const cases: [ModelPrice['provider'], string, string][] = [
      ['openai', 'gpt-4o', 'gpt-4o'],
      ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'],
      ['openai', 'gpt-4o-2024-11-20', 'gpt-4o'],
      ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
      ['openai', 'gpt-4.1-nano-2025-04-14', 'gpt-4.1-nano'],
      ['openai', 'o3-mini-2025-01-31', 'o3-mini'],
      ['openai', 'gpt-5-mini-2025-08-07', 'gpt-5-mini'],
      ['anthropic', 'claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
      ['anthropic', 'claude-3-7-sonnet-latest', 'claude-3-7-sonnet'],
      ['anthropic', 'claude-sonnet-4-20250514', 'claude-sonnet-4'],
      ['anthropic', 'claude-sonnet-4-0', 'claude-sonnet-4'],
      ['anthropic', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
      ['anthropic', 'claude-opus-4-1-20250805', 'claude-opus-4-1'],
      ['anthropic', 'claude-haiku-4-5-20251001', 'claude-haiku-4-5'],
    ]
    for (const [provider, model, family] of cases) expect(priceFor(provider, model)?.model).toBe(family)
  })

  test("Gemini, Mistral and xAI ids resolve to their makers' rows: Vertex Gemini, -latest and dated aliases, retired Grok ids", () => {
    const cases: [ModelPrice['provider'], string, string][] = [
      ['gemini', 'gemini-2.5-pro', 'gemini-2.5-pro'],
      ['vertex', 'gemini-2.5-pro', 'gemini-2.5-pro'],
      ['vertex', 'gemini-3.1-pro-preview', 'gemini-3.1-pro-preview'],
      ['mistral', 'mistral-large-latest', 'mistral-large'],
      ['mistral', 'mistral-large-2512', 'mistral-large'],
      ['mistral', 'mistral-medium-latest', 'mistral-medium'],
      ['mistral', 'mistral-small-2603', 'mistral-small'],
      ['mistral', 'codestral-latest', 'codestral'],
      // xAI serves its retired ids as grok-4.3 and bills them so.
      ['xai', 'grok-4-0709', 'grok-4.3'],
      ['xai', 'grok-code-fast-1', 'grok-4.3'],
    ]
    for (const [provider, model, row] of cases) expect(priceFor(provider, model)?.model, model).toBe(row)
    expect(priceFor('vertex', 'gemini-2.5-pro')).toBe(known('gemini', 'gemini-2.5-pro'))
    // Mistral Large 2.1 keeps its own price, above the family's.
    expect(priceFor('mistral', 'mistral-large-2411')?.inputNanoPerToken).toBe(2_000)
    expect(priceFor('mistral', 'mistral-large-latest')?.inputNanoPerToken).toBe(500)
  })

  test('an exact row beats the family its id would resolve to', () => {
    expect(priceFor('openai', 'gpt-4o-2024-05-13')?.inputNanoPerToken).toBe(5_000)
    expect(priceFor('openai', 'gpt-4o-2024-08-06')?.inputNanoPerToken).toBe(2_500)
  })

  test('an unknown model is undefined, never a guess', () => {
    const unknown: [ModelPrice['provider'], string][] = [
      ['openai', 'gpt-4o-audio-preview'],
      ['openai', 'gpt-4o-2024-08-06-custom'],
      ['openai', 'gpt-5.1'],
      ['openai', 'gpt-5-chat-latest'],
      ['openai', 'o1-mini'],
      ['openai', 'text-embedding-3'],
      ['openai', ''],
      ['openai', 'claude-sonnet-4-5'],
      ['anthropic', 'gpt-4o'],
      ['anthropic', 'claude-opus-4-6'],
      ['anthropic', 'claude-3-opus-20240229'],
      ['anthropic', 'claude-sonnet-4-5-20250929-extra'],
      ['gemini', 'gemini-2.0-flash'],
      ['mistral', 'ministral-8b-latest'],
      ['deepseek', 'deepseek-chat'],
      ['xai', 'grok-4.3-fast'],
    ]
    for (const [provider, model] of unknown) expect(priceFor(provider, model)).toBeUndefined()
  })
})

describe('estimateNano', () => {
  test('hand-computed: the dearest input rate on every body byte plus the output cap', () => {
    // 1,000 x 3,750 + 500 x 15,000
    expect(estimateNano(known('anthropic', 'claude-sonnet-4-5'), { bodyBytes: 1_000, maxOutputTokens: 500 })).toBe(11_250_000)
    // no cap asked: the model's maximum, 1,000 x 2,500 + 16,384 x 10,000
    expect(estimateNano(known('openai', 'gpt-4o'), { bodyBytes: 1_000 })).toBe(166_340_000)
  })

  test('an output cap above the model maximum counts as the maximum', () => {
    const gpt = known('openai', 'gpt-4o-mini')
    expect(estimateNano(gpt, { bodyBytes: 10, maxOutputTokens: 1_000_000 })).toBe(estimateNano(gpt, { bodyBytes: 10 }))
  })

  test('is at least the real cost of every usage consistent with the body size and output cap, for every row', () => {
    for (const price of PRICE_TABLE) {
      for (const bodyBytes of [0, 1, 2_000, 199_999, 200_000, 200_001, 450_000]) {
        for (const maxOutputTokens of [undefined, 0, 1, 777, price.maxOutputTokens, price.maxOutputTokens * 3]) {
          const estimate = estimateNano(price, { bodyBytes, maxOutputTokens })
          const completionCap = Math.min(maxOutputTokens ?? price.maxOutputTokens, price.maxOutputTokens)
          for (const promptTokens of new Set([0, 1, Math.floor(bodyBytes / 2), bodyBytes].filter((n) => n <= bodyBytes))) {
            for (const [readShare, writeShare] of [
              [0, 0],
              [1, 0],
              [0, 1],
              [0.5, 0.5],
              [0.25, 0.5],
            ] as const) {
              const cacheReadTokens = Math.floor(promptTokens * readShare)
              const cacheWriteTokens = Math.floor(promptTokens * writeShare)
              for (const completionTokens of new Set([0, Math.floor(completionCap / 2), completionCap])) {
                const cost = costNano(price, usage({ promptTokens, cacheReadTokens, cacheWriteTokens, completionTokens }))
                if (cost > estimate) throw new Error(`${price.model}: cost ${cost} > estimate ${estimate} at ${bodyBytes} bytes`)
              }
            }
          }
        }
      }
    }
  })
})

describe('PRICE_TABLE', () => {
  const isNanoRate = (n: number | undefined) => n === undefined || (Number.isSafeInteger(n) && n > 0)

  test('every row has positive integer prices, a max output, an https source and a real ISO date', () => {
    for (const row of PRICE_TABLE) {
      const where = `${row.provider} ${row.model}`
      expect(row.model, where).toMatch(/^[a-z0-9][a-z0-9.-]*$/)
      expect(Number.isSafeInteger(row.inputNanoPerToken) && row.inputNanoPerToken > 0, where).toBe(true)
      expect(isNanoRate(row.cacheReadNanoPerToken), where).toBe(true)
      expect(isNanoRate(row.cacheWriteNanoPerToken), where).toBe(true)
      expect(Number.isSafeInteger(row.maxOutputTokens) && row.maxOutputTokens >= 0, where).toBe(true)
      // A model that writes nothing (embeddings) has no output price; every other has a positive one.
      if (row.maxOutputTokens === 0) expect(row.outputNanoPerToken, where).toBe(0)
      else expect(Number.isSafeInteger(row.outputNanoPerToken) && row.outputNanoPerToken > 0, where).toBe(true)
      expect(new URL(row.source).protocol, where).toBe('https:')
      expect(row.asOf, where).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(new Date(`${row.asOf}T00:00:00Z`).toISOString().slice(0, 10), where).toBe(row.asOf)
    }
  })

  test('long-context rates are integers and never below the base rates, so the estimate stays a bound', () => {
    const fields: (keyof TokenRates)[] = [
      'inputNanoPerToken',
      'outputNanoPerToken',
      'cacheReadNanoPerToken',
      'cacheWriteNanoPerToken',
    ]
    for (const row of PRICE_TABLE) {
      const long = row.longContext
      if (!long) continue
      expect(Number.isSafeInteger(long.aboveInputTokens) && long.aboveInputTokens > 0).toBe(true)
      for (const field of fields) {
        expect(isNanoRate(long[field]), `${row.model} ${field}`).toBe(true)
        expect(long[field] ?? long.inputNanoPerToken).toBeGreaterThanOrEqual(row[field] ?? row.inputNanoPerToken)
      }
    }
  })

  test('no (provider, model) is listed twice, aliases included', () => {
    const ids = PRICE_TABLE.flatMap((row) => [row.model, ...(row.aliases ?? [])].map((id) => `${row.provider}/${id}`))
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('every row and alias is found by its own id', () => {
    for (const row of PRICE_TABLE) {
      for (const id of [row.model, ...(row.aliases ?? [])]) expect(priceFor(row.provider, id)).toBe(row)
    }
  })
})

describe('UNIT_PRICES', () => {
  test('every row has a positive integer price, an https source on the provider, a real ISO date, and is listed once', () => {
    for (const row of UNIT_PRICES) {
      expect(Number.isSafeInteger(row.nanoPerUnit) && row.nanoPerUnit > 0).toBe(true)
      expect(row.source).toStartWith('https://developers.openai.com/')
      expect(new Date(`${row.asOf}T00:00:00Z`).toISOString().slice(0, 10)).toBe(row.asOf)
    }
    expect(new Set(UNIT_PRICES.map((r) => `${r.provider}/${r.model}`)).size).toBe(UNIT_PRICES.length)
  })

  test('seconds are billed by each one started; characters as counted', () => {
    const whisper = unitPriceFor('openai', 'whisper-1')
    const tts = unitPriceFor('openai', 'tts-1')
    if (!whisper || !tts) throw new Error('rows missing')
    expect(unitsCostNano(whisper, 60)).toBe(6_000_000) // $0.006 a minute
    expect(unitsCostNano(whisper, 1.2)).toBe(200_000)
    expect(unitsCostNano(tts, 1_000_000)).toBe(15_000_000_000) // $15 a million characters
    expect(unitPriceFor('openai', 'gpt-4o')).toBeUndefined()
  })
})
