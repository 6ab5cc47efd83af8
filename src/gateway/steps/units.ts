import { type UnitPrice, unitPriceFor, unitsCostNano } from '../../money/unit-prices'

/** A transcript's duration in seconds, as `verbose_json` reports it near the start of the answer. */
const DURATION = /"duration"\s*:\s*(\d+(?:\.\d+)?)/

export interface UnitMeasure {
  unitPrice: UnitPrice
  /** Known before the call (speech bills the characters it is sent), for the estimate. */
  knownUnits?: number
  /** How many units the answer stands for, from its text. */
  unitsOf(answerText: string): number | undefined
}

/**
 * How a model billed by the character or the second is measured on a path: speech by the characters
 * of its `input` (counted as code points, known before the call), transcription by the duration the
 * answer reports. Undefined for a model the unit price table does not know.
 */
export function unitMeasure(
  measure: 'input-characters' | 'audio-seconds' | undefined,
  provider: string,
  model: string,
  body: Record<string, unknown>,
): UnitMeasure | undefined {
  const unitPrice = measure ? unitPriceFor(provider, model) : undefined
  if (!unitPrice) return undefined
  if (measure === 'input-characters') {
    const characters = typeof body.input === 'string' ? [...body.input].length : undefined
    return { unitPrice, knownUnits: characters, unitsOf: () => characters }
  }
  return {
    unitPrice,
    unitsOf: (text) => {
      const seconds = DURATION.exec(text)?.[1]
      return seconds === undefined ? undefined : Number(seconds)
    },
  }
}

/** The estimate of a unit-priced call, when its units are known before it is made. */
export const unitEstimate = (measure: UnitMeasure): number | undefined =>
  measure.knownUnits === undefined ? undefined : unitsCostNano(measure.unitPrice, measure.knownUnits)
