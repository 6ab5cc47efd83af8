import { asc, eq, inArray, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

/** `*` for a server or a tool: every one. */
export const ANY = '*'

export interface ToolRateRow {
  id: string
  orgId: string
  /** An MCP server's id, or `*`. */
  serverId: string
  /** A tool's name as its server calls it, or `*`. */
  tool: string
  usdNanoPerCall: number
  createdAt: Date
  updatedAt: Date
}

/**
 * One organisation's tool rates, one per (server, tool): writing one that is there changes its price
 * and keeps its id and creation time, so a rate keeps its identity while it is repriced.
 */
export const toolRatesRepository = ({ orm, tables: { toolRates } }: Database, orgId: string) => {
  const mine = orgRows(toolRates, orgId)
  /** The rates that could apply to one call: this server's or any server's, for this tool or any tool. */
  const candidates = (serverId: string, tool: string): Promise<ToolRateRow[]> =>
    orm
      .select()
      .from(toolRates)
      .where(mine.where(inArray(toolRates.serverId, [serverId, ANY]), inArray(toolRates.tool, [tool, ANY])))
  return {
    async list(): Promise<ToolRateRow[]> {
      return orm
        .select()
        .from(toolRates)
        .where(mine.where())
        .orderBy(asc(toolRates.serverId), asc(toolRates.tool), asc(toolRates.id))
    },
    /** The rate that prices a call of `tool` on `serverId`: the most specific there is, undefined when none (free). */
    async rateFor(serverId: string, tool: string): Promise<ToolRateRow | undefined> {
      return mostSpecific(await candidates(serverId, tool), serverId, tool)
    },
    /** Creates the rate, or reprices the one of the same server and tool; answers what is stored. */
    async upsert(row: Omit<ToolRateRow, 'orgId'>): Promise<ToolRateRow> {
      const [stored] = await orm
        .insert(toolRates)
        .values(mine.row(row))
        .onConflictDoUpdate({
          target: [toolRates.orgId, toolRates.serverId, toolRates.tool],
          set: { usdNanoPerCall: sql`excluded.usd_nano_per_call`, updatedAt: sql`excluded.updated_at` },
        })
        .returning()
      return stored as ToolRateRow
    },
    async delete(id: string): Promise<boolean> {
      const gone = await orm
        .delete(toolRates)
        .where(mine.where(eq(toolRates.id, id)))
        .returning({ id: toolRates.id })
      return gone.length > 0
    },
  }
}

/** Server and tool, then server and any tool, then any server and tool, then any and any. */
export function mostSpecific(rates: readonly ToolRateRow[], serverId: string, tool: string): ToolRateRow | undefined {
  const order: Array<[string, string]> = [
    [serverId, tool],
    [serverId, ANY],
    [ANY, tool],
    [ANY, ANY],
  ]
  for (const [server, name] of order) {
    const found = rates.find((rate) => rate.serverId === server && rate.tool === name)
    if (found) return found
  }
  return undefined
}
