import { ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { priceFor } from '../../money/cost'
import type { ModelPrice } from '../../money/prices'
import { MAX_USD, PriceBody, type PriceField, type PriceInput } from './model'

/** What is wrong with one field of one price (`field` is null when it is the row as a whole). */
export interface FieldProblem {
  field: string | null
  message: string
}

/** A price checked and in stored units: nano-USD, an instant. */
export interface CheckedPrice {
  provider: ModelPrice['provider']
  model: string
  inputNanoPerMtok: number
  outputNanoPerMtok: number
  cacheReadNanoPerMtok: number | null
  cacheWriteNanoPerMtok: number | null
  perRequestNano: number | null
  maxOutputTokens: number | null
  effectiveFrom: Date
}

const NANO_PER_USD = 1_000_000_000
const MAX_DECIMALS = 9

/**
 * How many decimal places a number has as written: JavaScript prints a number as the shortest decimal
 * that reads back as it, which is the one the caller wrote whenever that had at most 15 significant
 * digits. Below 1e-6 it prints an exponent (`1.5e-7`); a USD amount is never large enough for a positive one.
 */
function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = String(value).split('e')
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent))
}

/**
 * A USD amount in nano-USD, or undefined when it has more than nine decimal places: such an amount has
 * no exact nano-USD value, and a price must not be rounded silently. With at most nine places and at
 * most MAX_USD, the product is within half a unit of the intended integer, so rounding recovers it.
 */
function usdToNano(value: number): number | undefined {
  if (!Number.isFinite(value) || value < 0 || value > MAX_USD || decimalPlaces(value) > MAX_DECIMALS) return undefined
  return Math.round(value * NANO_PER_USD)
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
// A time needs its zone: without one, JavaScript reads it as the server's local time.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i

/**
 * An instant written in ISO 8601: a date (midnight UTC), or a date and time with `Z` or an offset.
 * Fields out of range (February 30th, 25 o'clock) are refused, not rolled over. Milliseconds are kept,
 * finer digits dropped, as the database keeps them.
 */
export function parseInstant(text: string): Date | undefined {
  const match = DATE.exec(text) ?? DATE_TIME.exec(text)
  if (!match) return undefined
  const [, year, month, day, hour = '0', minute = '0', second = '0', offsetHours = '0', offsetMinutes = '0'] = match
  const y = Number(year)
  const m = Number(month)
  const d = Number(day)
  const calendar = new Date(Date.UTC(y, m - 1, d))
  if (calendar.getUTCFullYear() !== y || calendar.getUTCMonth() !== m - 1 || calendar.getUTCDate() !== d) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined
  const parsed = new Date(text.length === 10 ? `${text}T00:00:00Z` : text)
  return Number.isNaN(parsed.getTime()) ? undefined : parsed
}

// Control characters cannot be in a model id a provider serves, and would corrupt logs and CSV exports.
const CONTROL = /\p{Cc}/u

function schemaProblems(row: unknown): FieldProblem[] {
  if (typeof row !== 'object' || row === null || Array.isArray(row))
    return [{ field: null, message: 'must be an object with the fields of PUT /v1/model-prices' }]
  const problems: FieldProblem[] = []
  const seen = new Set<string>()
  for (const error of Value.Errors(PriceBody, row)) {
    const field = error.path.replace(/^\//, '').split('/')[0] ?? ''
    if (seen.has(field)) continue
    seen.add(field)
    const own = typeof error.schema.error === 'string' ? error.schema.error : error.message
    const message =
      error.type === ValueErrorType.ObjectRequiredProperty
        ? 'is required'
        : error.type === ValueErrorType.ObjectAdditionalProperties
          ? `is not a field of a price (${Object.keys(PriceBody.properties).join(', ')})`
          : own
    problems.push({ field, message })
  }
  return problems
}

/**
 * One price checked whole: its shape against the model, then what a schema cannot say (exact nano-USD,
 * a real instant, a maximum output gw can bound a call with). Every problem is reported, not the first.
 */
export function checkPrice(row: unknown, now: Date): { price: CheckedPrice } | { problems: FieldProblem[] } {
  const shape = schemaProblems(row)
  if (shape.length > 0) return { problems: shape }
  const input = row as PriceInput
  const problems: FieldProblem[] = []
  const problem = (field: PriceField, message: string) => problems.push({ field, message })

  if (CONTROL.test(input.model)) problem('model', 'must not hold control characters')
  else if (input.model.trim() !== input.model) problem('model', 'must not start or end with white space')

  const nano = (
    field: 'inputPerMillion' | 'outputPerMillion' | 'cacheReadPerMillion' | 'cacheWritePerMillion' | 'perRequest',
  ) => {
    const value = input[field]
    if (value === undefined) return null
    const exact = usdToNano(value)
    if (exact === undefined) {
      problem(field, `${value} has more than ${MAX_DECIMALS} decimal places: a price is held exactly in nano-USD`)
      return null
    }
    return exact
  }
  const inputNanoPerMtok = nano('inputPerMillion') ?? 0
  const outputNanoPerMtok = nano('outputPerMillion') ?? 0
  const cacheReadNanoPerMtok = nano('cacheReadPerMillion')
  const cacheWriteNanoPerMtok = nano('cacheWritePerMillion')
  const perRequestNano = nano('perRequest')

  let effectiveFrom = now
  if (input.effectiveFrom !== undefined) {
    const parsed = parseInstant(input.effectiveFrom)
    if (parsed) effectiveFrom = parsed
    else problem('effectiveFrom', 'must be an ISO 8601 date-time with a time zone (2026-03-01T00:00:00Z) or a date (2026-03-01)')
  }

  if (input.maxOutputTokens === undefined && priceFor(input.provider, input.model) === undefined)
    problem(
      'maxOutputTokens',
      `is required for ${input.provider} model ${JSON.stringify(input.model)}: gw has no built-in price for it, and needs the most a call can write to bound the call's cost before making it`,
    )

  if (problems.length > 0) return { problems }
  return {
    price: {
      provider: input.provider,
      model: input.model,
      inputNanoPerMtok,
      outputNanoPerMtok,
      cacheReadNanoPerMtok,
      cacheWriteNanoPerMtok,
      perRequestNano,
      maxOutputTokens: input.maxOutputTokens ?? null,
      effectiveFrom,
    },
  }
}

/** A record of a CSV text, with the line it starts on (1-based; a quoted field may span lines). */
interface CsvRecord {
  line: number
  cells: string[]
}

/**
 * RFC 4180: fields separated by commas, records by CRLF or LF; a quoted field may hold commas, line
 * breaks and doubled quotes. A quote inside an unquoted field, or one never closed, is an error naming
 * its line. Blank lines are skipped.
 */
function parseCsv(text: string): { records: CsvRecord[] } | { error: string } {
  const records: CsvRecord[] = []
  let line = 1
  let start = 1
  let cells: string[] = []
  let cell = ''
  let quoted = false
  let wasQuoted = false
  const endRecord = () => {
    cells.push(cell)
    if (cells.length > 1 || wasQuoted || cell !== '') records.push({ line: start, cells })
    cells = []
    cell = ''
    wasQuoted = false
  }
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text
  for (let i = 0; i < body.length; i++) {
    const char = body[i]
    if (quoted) {
      if (char === '"') {
        if (body[i + 1] === '"') {
          cell += '"'
          i++
        } else {
          quoted = false
          const next = body[i + 1]
          if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r')
            return { error: `line ${line}: a quoted field must end at a comma or the end of the line` }
        }
      } else {
        if (char === '\n') line++
        cell += char
      }
      continue
    }
    if (char === '"') {
      if (cell !== '')
        return { error: `line ${line}: a quote inside an unquoted field (quote the whole field, doubling its quotes)` }
      quoted = true
      wasQuoted = true
    } else if (char === ',') {
      cells.push(cell)
      cell = ''
      wasQuoted = false
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && body[i + 1] === '\n') i++
      endRecord()
      line++
      start = line
    } else cell += char
  }
  if (quoted) return { error: `line ${start}: a quoted field is never closed` }
  endRecord()
  return { records }
}

const NUMBER_FIELDS: ReadonlySet<string> = new Set(
  Object.entries(PriceBody.properties)
    .filter(([, schema]) => schema.type === 'number' || schema.type === 'integer')
    .map(([field]) => field),
)
const FIELDS: ReadonlySet<string> = new Set(Object.keys(PriceBody.properties))
const REQUIRED: readonly string[] = PriceBody.required ?? []
const DECIMAL = /^\d+(?:\.\d+)?$/

/** A CSV row as the object a JSON import would carry; an empty cell is an absent field. */
interface CsvRow {
  line: number
  value: Record<string, unknown>
  problems: FieldProblem[]
}

/** The rows of a CSV import: a header line naming the fields of a price, then one line per price. */
export function csvRows(text: string): { rows: CsvRow[] } | { error: string } {
  const parsed = parseCsv(text)
  if ('error' in parsed) return parsed
  const [header, ...records] = parsed.records
  if (!header) return { error: 'the CSV is empty: it needs a header line naming the fields, then a line per price' }
  const names = header.cells.map((name) => name.trim())
  const unknown = names.filter((name) => !FIELDS.has(name))
  if (unknown.length > 0)
    return {
      error: `line ${header.line}: the header names ${unknown.map((name) => JSON.stringify(name)).join(', ')}, which are not fields of a price (${[...FIELDS].join(', ')})`,
    }
  const repeated = names.find((name, at) => names.indexOf(name) !== at)
  if (repeated !== undefined) return { error: `line ${header.line}: the header names ${repeated} twice` }
  const missing = REQUIRED.filter((name) => !names.includes(name))
  if (missing.length > 0) return { error: `line ${header.line}: the header lacks ${missing.join(', ')}` }
  return {
    rows: records.map(({ line, cells }) => {
      if (cells.length !== names.length)
        return {
          line,
          value: {},
          problems: [{ field: null, message: `has ${cells.length} fields where the header names ${names.length}` }],
        }
      const value: Record<string, unknown> = {}
      const problems: FieldProblem[] = []
      names.forEach((name, at) => {
        const cell = cells[at] ?? ''
        if (cell === '') return
        if (!NUMBER_FIELDS.has(name)) value[name] = cell
        else if (DECIMAL.test(cell.trim())) value[name] = Number(cell.trim())
        else problems.push({ field: name, message: `${JSON.stringify(cell)} is not a decimal number (such as 2.5)` })
      })
      return { line, value, problems }
    }),
  }
}
