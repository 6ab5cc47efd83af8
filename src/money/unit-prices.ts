/**
 * Prices of models billed by something other than tokens: speech by the characters it reads, whisper
 * by the seconds of audio it hears. Unit: nano-USD per unit, whole numbers, as the token table's.
 * `asOf` is the day the row was checked against its `source`.
 */
export type PricedUnit = 'character' | 'second'

export interface UnitPrice {
  provider: 'openai'
  model: string
  unit: PricedUnit
  nanoPerUnit: number
  source: string
  /** YYYY-MM-DD */
  asOf: string
}

const CHECKED = '2026-11-24'
const openaiModelPage = (model: string) => `https://developers.openai.com/api/docs/models/${model}`

export const UNIT_PRICES: readonly UnitPrice[] = [
  // $15.00 and $30.00 per 1M characters.
  { provider: 'openai', model: 'tts-1', unit: 'character', nanoPerUnit: 15_000, source: openaiModelPage('tts-1'), asOf: CHECKED },
  {
    provider: 'openai',
    model: 'tts-1-hd',
    unit: 'character',
    nanoPerUnit: 30_000,
    source: openaiModelPage('tts-1'),
    asOf: CHECKED,
  },
  // $0.006 a minute, counted here by the second (each started second).
  {
    provider: 'openai',
    model: 'whisper-1',
    unit: 'second',
    nanoPerUnit: 100_000,
    source: openaiModelPage('whisper-1'),
    asOf: CHECKED,
  },
]

export const unitPriceFor = (provider: string, model: string): UnitPrice | undefined =>
  UNIT_PRICES.find((row) => row.provider === provider && row.model === model)

/** What `units` of a unit-priced model cost, in nano-USD: seconds are billed by each one started. */
export const unitsCostNano = (price: UnitPrice, units: number): number =>
  (price.unit === 'second' ? Math.ceil(units) : units) * price.nanoPerUnit
