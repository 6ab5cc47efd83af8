import { asc, eq } from 'drizzle-orm'
import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import { isUniqueViolation } from '../faults'
import type { ChainRetry, ChainStep, ChainTriggers } from '../json-columns'
import { orgRows } from '../scope'

export interface FallbackChainRow {
  id: string
  orgId: string
  name: string
  /** The model name a call gives to be served by this chain: unique in the organisation. */
  matchModel: string
  steps: ChainStep[]
  /** As the organisation gave them; null: the defaults. */
  triggers: ChainTriggers | null
  retry: ChainRetry | null
  createdAt: Date
  updatedAt: Date
}

/** What a write that would give a second chain of the organisation the same `matchModel` answers. */
export const ALIAS_TAKEN = 'alias_taken' as const

/**
 * One organisation's fallback chains: another organisation's chain is not found. The unique index on
 * (organisation, matchModel) decides a clash, so two writes racing for one alias cannot both win.
 */
export const fallbackChainsRepository = ({ orm, dialect, tables: { fallbackChains } }: Database, orgId: string) => {
  const chain = orgRows(fallbackChains, orgId)
  // Read every second for each organisation in use (directory/chains.ts): compiled once (compiled-read.ts).
  const listAll = orgRead<FallbackChainRow>({ orm, dialect }, chain, 'fallbackChains.list', (where) =>
    orm.select().from(fallbackChains).where(where()).orderBy(asc(fallbackChains.createdAt), asc(fallbackChains.id)),
  )
  return {
    list(): Promise<FallbackChainRow[]> {
      return listAll()
    },
    async get(id: string): Promise<FallbackChainRow | undefined> {
      const [row] = await orm
        .select()
        .from(fallbackChains)
        .where(chain.where(eq(fallbackChains.id, id)))
        .limit(1)
      return row
    },
    /** Adds the chain, or answers ALIAS_TAKEN when the organisation has a chain for its model already. */
    async create(fields: Omit<FallbackChainRow, 'orgId'>): Promise<typeof ALIAS_TAKEN | undefined> {
      const rows = await orm
        .insert(fallbackChains)
        .values(chain.row(fields))
        .onConflictDoNothing()
        .returning({ id: fallbackChains.id })
      return rows.length > 0 ? undefined : ALIAS_TAKEN
    },
    /**
     * Replaces the chain's fields: the changed row, undefined when the organisation has no such chain,
     * or ALIAS_TAKEN when another of its chains has the new model.
     */
    async update(
      id: string,
      change: Omit<FallbackChainRow, 'id' | 'orgId' | 'createdAt'>,
    ): Promise<FallbackChainRow | typeof ALIAS_TAKEN | undefined> {
      try {
        const [row] = await orm
          .update(fallbackChains)
          .set(change)
          .where(chain.where(eq(fallbackChains.id, id)))
          .returning()
        return row
      } catch (error) {
        if (isUniqueViolation(error)) return ALIAS_TAKEN
        throw error
      }
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(fallbackChains)
        .where(chain.where(eq(fallbackChains.id, id)))
        .returning({ id: fallbackChains.id })
      return rows.length > 0
    },
  }
}
