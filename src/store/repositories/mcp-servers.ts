import { asc, eq, isNotNull } from 'drizzle-orm'
import type { Database } from '../database'
import { isUniqueViolation } from '../faults'
import { orgRows } from '../scope'

export type McpTransport = 'streamable_http' | 'sse'

export interface McpServerRow {
  id: string
  orgId: string
  /** The tool prefix (`<name>__<tool>`): unique in the organisation. */
  name: string
  url: string
  transport: McpTransport
  authKind: 'none' | 'bearer'
  /** The bearer token, sealed by the vault under `sealContexts.mcpServerToken`; null without one. */
  sealedToken: string | null
  tokenHint: string | null
  toolAllow: string[]
  toolDeny: string[]
  enabled: boolean
  platformServerId: string | null
  createdAt: Date
  updatedAt: Date
}

/** What a write that would give a second server of the organisation the same name answers. */
export const NAME_TAKEN = 'name_taken' as const

/**
 * One organisation's registered MCP servers: another organisation's server is not found. The unique
 * index on (organisation, name) decides a clash, so two writes racing for one name cannot both win.
 */
export const mcpServersRepository = ({ orm, tables: { mcpServers } }: Database, orgId: string) => {
  const mine = orgRows(mcpServers, orgId)
  return {
    async list(): Promise<McpServerRow[]> {
      return orm.select().from(mcpServers).where(mine.where()).orderBy(asc(mcpServers.createdAt), asc(mcpServers.id))
    },
    async get(id: string): Promise<McpServerRow | undefined> {
      const [row] = await orm
        .select()
        .from(mcpServers)
        .where(mine.where(eq(mcpServers.id, id)))
        .limit(1)
      return row
    },
    async byPlatformServer(platformServerId: string): Promise<McpServerRow | undefined> {
      const [row] = await orm
        .select()
        .from(mcpServers)
        .where(mine.where(eq(mcpServers.platformServerId, platformServerId)))
        .limit(1)
      return row
    },
    async names(): Promise<Set<string>> {
      const rows = await orm.select({ name: mcpServers.name }).from(mcpServers).where(mine.where())
      return new Set(rows.map((row) => row.name))
    },
    /** Adds the server, or answers NAME_TAKEN when the organisation has a server of that name already. */
    async create(fields: Omit<McpServerRow, 'orgId'>): Promise<typeof NAME_TAKEN | undefined> {
      const rows = await orm.insert(mcpServers).values(mine.row(fields)).onConflictDoNothing().returning({ id: mcpServers.id })
      return rows.length > 0 ? undefined : NAME_TAKEN
    },
    /** The changed row, undefined when the organisation has no such server, or NAME_TAKEN on a clash of names. */
    async update(
      id: string,
      change: Partial<Omit<McpServerRow, 'id' | 'orgId' | 'createdAt'>>,
    ): Promise<McpServerRow | typeof NAME_TAKEN | undefined> {
      try {
        const [row] = await orm
          .update(mcpServers)
          .set(change)
          .where(mine.where(eq(mcpServers.id, id)))
          .returning()
        return row
      } catch (error) {
        if (isUniqueViolation(error)) return NAME_TAKEN
        throw error
      }
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(mcpServers)
        .where(mine.where(eq(mcpServers.id, id)))
        .returning({ id: mcpServers.id })
      return rows.length > 0
    },
  }
}

/** Every organisation's sealed MCP server tokens: for re-sealing them when the server secret is rotated, nothing else. */
export const mcpServerSealsRepository = ({ orm, tables: { mcpServers } }: Database) => ({
  async listAll(): Promise<Array<{ id: string; orgId: string; sealedToken: string }>> {
    const rows = await orm
      .select({ id: mcpServers.id, orgId: mcpServers.orgId, sealedToken: mcpServers.sealedToken })
      .from(mcpServers)
      .where(isNotNull(mcpServers.sealedToken))
    return rows.flatMap((row) => (row.sealedToken === null ? [] : [{ ...row, sealedToken: row.sealedToken }]))
  },
  async reseal(id: string, sealedToken: string): Promise<void> {
    await orm.update(mcpServers).set({ sealedToken }).where(eq(mcpServers.id, id))
  },
})
