import type { Principal } from '../../auth/principal'
import { badRequest, notFound } from '../../errors'
import { nanoToUsd } from '../../money/cost'
import type { PriceBook } from '../../money/price-book'
import type { ModelPriceRow, NewModelPrice } from '../../store/repositories/model-prices'
import type { Clock, Store } from '../../store/store'
import { type DeleteInput, type ImportInput, MAX_IMPORT_ROWS, type PriceInput } from './model'
import { type CheckedPrice, checkPrice, csvRows, type FieldProblem, parseInstant } from './rows'

/** How many row problems an import's refusal spells out in its message; `details.errors` holds more. */
const LISTED_PROBLEMS = 10
const DETAILED_PROBLEMS = 100

const usdOrNull = (nano: number | null) => (nano === null ? null : nanoToUsd(nano))

const identity = (row: { provider: string; model: string; effectiveFrom: Date }) =>
  `${row.provider}\u0000${row.model}\u0000${row.effectiveFrom.getTime()}`

/** The ids of the overrides in force at `at`: per model id, the latest that has taken effect. */
function inForceAt(rows: readonly ModelPriceRow[], at: number): Set<string> {
  const latest = new Map<string, ModelPriceRow>()
  for (const row of rows) {
    if (row.effectiveFrom.getTime() > at) continue
    const key = `${row.provider}\u0000${row.model}`
    const found = latest.get(key)
    if (!found || found.effectiveFrom < row.effectiveFrom) latest.set(key, row)
  }
  return new Set([...latest.values()].map((row) => row.id))
}

const view = (row: ModelPriceRow, inForce: boolean) => ({
  id: row.id,
  provider: row.provider,
  model: row.model,
  inputPerMillion: nanoToUsd(row.inputNanoPerMtok),
  outputPerMillion: nanoToUsd(row.outputNanoPerMtok),
  cacheReadPerMillion: usdOrNull(row.cacheReadNanoPerMtok),
  cacheWritePerMillion: usdOrNull(row.cacheWriteNanoPerMtok),
  perRequest: usdOrNull(row.perRequestNano),
  maxOutputTokens: row.maxOutputTokens,
  effectiveFrom: row.effectiveFrom.toISOString(),
  inForce,
  createdAt: row.createdAt.toISOString(),
})

const described = (problems: readonly FieldProblem[]) =>
  problems.map(({ field, message }) => (field === null ? message : `${field} ${message}`)).join('; ')

/** A row of an import, as its refusal names it. */
interface ImportRow {
  row: number
  /** The CSV line it starts on. */
  line?: number
  value: unknown
  problems: FieldProblem[]
}

interface RowProblem extends FieldProblem {
  row: number
  line?: number
}

const whereOf = (problem: RowProblem) =>
  `row ${problem.row}${problem.line === undefined ? '' : ` (line ${problem.line})`}${problem.field === null ? '' : `, ${problem.field}`}`

/**
 * An organisation's own prices for models, over the built-in table. Every change drops the
 * organisation's overrides from this instance's price book at once; other instances see it within
 * the book's second.
 */
export class ModelPricesService {
  constructor(
    private readonly store: Store,
    private readonly prices: Pick<PriceBook, 'forget'>,
    private readonly now: Clock = Date.now,
  ) {}

  async list(principal: Principal) {
    const rows = await this.store.org(principal.orgId).modelPrices.list()
    const inForce = inForceAt(rows, this.now())
    return rows.map((row) => view(row, inForce.has(row.id)))
  }

  async put(principal: Principal, input: PriceInput) {
    const now = new Date(this.now())
    const checked = checkPrice(input, now)
    if ('problems' in checked) throw badRequest(`invalid price: ${described(checked.problems)}`)
    const row = this.stored(checked.price, now)
    const prices = this.store.org(principal.orgId).modelPrices
    await prices.upsert([row])
    this.prices.forget(principal.orgId)
    const same = await prices.forModel(row.provider, row.model)
    const inForce = inForceAt(same, now.getTime())
    // Read back rather than echoed, so the answer is what is stored; a delete that came in between leaves the echo.
    const stored = same.find((found) => found.id === row.id) ?? { ...row, orgId: principal.orgId }
    return view(stored, inForce.has(stored.id))
  }

  async remove(principal: Principal, target: Partial<DeleteInput>) {
    const { provider, model } = target
    if (provider === undefined || model === undefined)
      throw badRequest('name the provider and the model, as query parameters (?provider=&model=) or in a JSON body')
    const query = { ...target, provider, model }
    let effectiveFrom: Date | undefined
    if (query.effectiveFrom !== undefined) {
      effectiveFrom = parseInstant(query.effectiveFrom)
      if (!effectiveFrom) throw badRequest('effectiveFrom must be an ISO 8601 date-time with a time zone, or a date')
    }
    const deleted = await this.store.org(principal.orgId).modelPrices.remove(query.provider, query.model, effectiveFrom)
    if (deleted === 0)
      throw notFound(
        `price override of ${query.provider} model ${JSON.stringify(query.model)}${effectiveFrom ? ` from ${effectiveFrom.toISOString()}` : ''}`,
      )
    this.prices.forget(principal.orgId)
    return { provider: query.provider, model: query.model, deleted }
  }

  /**
   * Every row is checked before anything is written; one bad row refuses the whole import, naming each
   * problem's row and field. The write is one transaction: a replace never leaves the organisation
   * with none of its prices, or half of the new ones.
   */
  async import(principal: Principal, input: ImportInput) {
    const now = new Date(this.now())
    const rows = this.rowsOf(input)
    const problems: RowProblem[] = []
    const checked: NewModelPrice[] = []
    const seen = new Map<string, number>()
    for (const { row, line, value, problems: read } of rows) {
      const at = line === undefined ? { row } : { row, line }
      const result = checkPrice(value, now)
      // A CSV cell that is no number is reported as such, not again as a missing field.
      const unread = 'problems' in result ? result.problems.filter((p) => !read.some((r) => r.field === p.field)) : []
      const found = [...read, ...unread]
      if (found.length > 0 || 'problems' in result) {
        problems.push(...found.map((problem) => ({ ...at, ...problem })))
        continue
      }
      const key = identity(result.price)
      const first = seen.get(key)
      if (first !== undefined) {
        problems.push({ ...at, field: null, message: `repeats row ${first}: provider, model and effectiveFrom must differ` })
        continue
      }
      seen.set(key, row)
      checked.push(this.stored(result.price, now))
    }
    if (problems.length > 0) {
      const listed = problems.slice(0, LISTED_PROBLEMS).map((problem) => `${whereOf(problem)}: ${problem.message}`)
      const more = problems.length > LISTED_PROBLEMS ? `; and ${problems.length - LISTED_PROBLEMS} more` : ''
      throw badRequest(`the import changed nothing: ${listed.join('; ')}${more}`, {
        errors: problems.slice(0, DETAILED_PROBLEMS),
      })
    }
    const replaced = await this.store.transaction(async (tx) => {
      const prices = tx.org(principal.orgId).modelPrices
      if (input.mode === 'replace') return prices.replaceAll(checked)
      await prices.upsert(checked)
      return 0
    })
    this.prices.forget(principal.orgId)
    return { imported: checked.length, replaced }
  }

  private rowsOf(input: ImportInput): ImportRow[] {
    if (input.format === 'json') {
      if (input.csv !== undefined) throw badRequest('format json takes its prices in rows, not csv')
      if (input.rows === undefined) throw badRequest('format json needs rows: an array of prices')
      return input.rows.map((value, at) => ({ row: at + 1, value, problems: [] }))
    }
    if (input.rows !== undefined) throw badRequest('format csv takes its prices in csv, not rows')
    if (input.csv === undefined) throw badRequest('format csv needs csv: a header line naming the fields, then a line per price')
    const parsed = csvRows(input.csv)
    if ('error' in parsed) throw badRequest(`the import changed nothing: ${parsed.error}`)
    if (parsed.rows.length > MAX_IMPORT_ROWS)
      throw badRequest(`the CSV holds ${parsed.rows.length} prices; an import takes at most ${MAX_IMPORT_ROWS}`)
    return parsed.rows.map(({ line, value, problems }, at) => ({ row: at + 1, line, value, problems }))
  }

  private stored(price: CheckedPrice, now: Date): NewModelPrice {
    return { id: crypto.randomUUID(), ...price, createdAt: now }
  }
}
