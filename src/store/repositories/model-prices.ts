import { and, asc, eq, sql } from 'drizzle-orm'
import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface ModelPriceRow {
  id: string
  orgId: string
  provider: string
  model: string
  inputNanoPerMtok: number
  outputNanoPerMtok: number
  cacheReadNanoPerMtok: number | null
  cacheWriteNanoPerMtok: number | null
  /** Null: the built-in row's maximum applies. */
  maxOutputTokens: number | null
  perRequestNano: number | null
  effectiveFrom: Date
  createdAt: Date
}

export type NewModelPrice = Omit<ModelPriceRow, 'orgId'>

/** Twelve columns a row: well under either dialect's limit of bound parameters per statement. */
const BATCH = 500

/**
 * One organisation's price overrides. A row is known by (provider, model, effectiveFrom): writing one
 * that is already there replaces it whole, its id and creation time included, so the id a request
 * record names as its price source always stands for the rates it was priced at.
 */
export const modelPricesRepository = ({ orm, dialect, tables: { modelPrices } }: Database, orgId: string) => {
  const price = orgRows(modelPrices, orgId)
  const replaceWhole = {
    target: [modelPrices.orgId, modelPrices.provider, modelPrices.model, modelPrices.effectiveFrom],
    set: {
      id: sql`excluded.id`,
      inputNanoPerMtok: sql`excluded.input_nano_per_mtok`,
      outputNanoPerMtok: sql`excluded.output_nano_per_mtok`,
      cacheReadNanoPerMtok: sql`excluded.cache_read_nano_per_mtok`,
      cacheWriteNanoPerMtok: sql`excluded.cache_write_nano_per_mtok`,
      maxOutputTokens: sql`excluded.max_output_tokens`,
      perRequestNano: sql`excluded.per_request_nano`,
      createdAt: sql`excluded.created_at`,
    },
  }
  const ordered = [asc(modelPrices.provider), asc(modelPrices.model), asc(modelPrices.effectiveFrom)]
  // Read every second for each organisation in use (money/price-book.ts): compiled once (compiled-read.ts).
  const listAll = orgRead<ModelPriceRow>({ orm, dialect }, price, 'modelPrices.list', (where) =>
    orm
      .select()
      .from(modelPrices)
      .where(where())
      .orderBy(...ordered),
  )
  return {
    list(): Promise<ModelPriceRow[]> {
      return listAll()
    },
    /** Every override of one model id, oldest first. */
    async forModel(provider: string, model: string): Promise<ModelPriceRow[]> {
      return orm
        .select()
        .from(modelPrices)
        .where(price.where(eq(modelPrices.provider, provider), eq(modelPrices.model, model)))
        .orderBy(...ordered)
    },
    /** Creates each row, or replaces the one with its provider, model and effectiveFrom. */
    async upsert(rows: readonly NewModelPrice[]): Promise<void> {
      for (let i = 0; i < rows.length; i += BATCH)
        await orm
          .insert(modelPrices)
          .values(rows.slice(i, i + BATCH).map((row) => price.row(row)))
          .onConflictDoUpdate(replaceWhole)
    },
    /** The model's overrides (only the one from `effectiveFrom`, when given) removed; answers how many. */
    async remove(provider: string, model: string, effectiveFrom?: Date): Promise<number> {
      const gone = await orm
        .delete(modelPrices)
        .where(
          price.where(
            and(
              eq(modelPrices.provider, provider),
              eq(modelPrices.model, model),
              effectiveFrom === undefined ? undefined : eq(modelPrices.effectiveFrom, effectiveFrom),
            ),
          ),
        )
        .returning({ id: modelPrices.id })
      return gone.length
    },
    /**
     * Every override of the organisation replaced by `rows`; answers how many were removed. Atomic only
     * within a transaction, which is where the caller runs it.
     */
    async replaceAll(rows: readonly NewModelPrice[]): Promise<number> {
      const gone = await orm.delete(modelPrices).where(price.where()).returning({ id: modelPrices.id })
      for (let i = 0; i < rows.length; i += BATCH)
        await orm.insert(modelPrices).values(rows.slice(i, i + BATCH).map((row) => price.row(row)))
      return gone.length
    },
  }
}
