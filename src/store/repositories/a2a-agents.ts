import { asc, eq, isNotNull } from 'drizzle-orm'
import type { Database } from '../database'
import { isUniqueViolation } from '../faults'
import type { AgentCardDocument } from '../json-columns'
import { orgRows } from '../scope'

export interface A2aAgentRow {
  id: string
  orgId: string
  /** What access rules name the agent by (`{kind: 'agent', id: <name>}`): unique in the organisation. */
  name: string
  url: string
  /** The outbound key, sealed by the vault under `sealContexts.a2aAgentKey`; null without one. */
  sealedKey: string | null
  keyHint: string | null
  card: AgentCardDocument | null
  createdAt: Date
  updatedAt: Date
}

/** What a write that would give a second agent of the organisation the same name answers. */
export const AGENT_NAME_TAKEN = 'name_taken' as const

/**
 * One organisation's registered A2A agents: another organisation's agent is not found. The unique index
 * on (organisation, name) decides a clash, so two writes racing for one name cannot both win.
 */
export const a2aAgentsRepository = ({ orm, tables: { a2aAgents } }: Database, orgId: string) => {
  const mine = orgRows(a2aAgents, orgId)
  return {
    async list(): Promise<A2aAgentRow[]> {
      return orm.select().from(a2aAgents).where(mine.where()).orderBy(asc(a2aAgents.createdAt), asc(a2aAgents.id))
    },
    async get(id: string): Promise<A2aAgentRow | undefined> {
      const [row] = await orm
        .select()
        .from(a2aAgents)
        .where(mine.where(eq(a2aAgents.id, id)))
        .limit(1)
      return row
    },
    /** Adds the agent, or answers AGENT_NAME_TAKEN when the organisation has an agent of that name already. */
    async create(fields: Omit<A2aAgentRow, 'orgId'>): Promise<typeof AGENT_NAME_TAKEN | undefined> {
      const rows = await orm.insert(a2aAgents).values(mine.row(fields)).onConflictDoNothing().returning({ id: a2aAgents.id })
      return rows.length > 0 ? undefined : AGENT_NAME_TAKEN
    },
    /** The changed row, undefined when the organisation has no such agent, or AGENT_NAME_TAKEN on a clash of names. */
    async update(
      id: string,
      change: Partial<Omit<A2aAgentRow, 'id' | 'orgId' | 'createdAt'>>,
    ): Promise<A2aAgentRow | typeof AGENT_NAME_TAKEN | undefined> {
      try {
        const [row] = await orm
          .update(a2aAgents)
          .set(change)
          .where(mine.where(eq(a2aAgents.id, id)))
          .returning()
        return row
      } catch (error) {
        if (isUniqueViolation(error)) return AGENT_NAME_TAKEN
        throw error
      }
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(a2aAgents)
        .where(mine.where(eq(a2aAgents.id, id)))
        .returning({ id: a2aAgents.id })
      return rows.length > 0
    },
  }
}

/** Every organisation's sealed agent keys: for re-sealing them when the server secret is rotated, nothing else. */
export const a2aAgentSealsRepository = ({ orm, tables: { a2aAgents } }: Database) => ({
  async listAll(): Promise<Array<{ id: string; orgId: string; sealedKey: string }>> {
    const rows = await orm
      .select({ id: a2aAgents.id, orgId: a2aAgents.orgId, sealedKey: a2aAgents.sealedKey })
      .from(a2aAgents)
      .where(isNotNull(a2aAgents.sealedKey))
    return rows.flatMap((row) => (row.sealedKey === null ? [] : [{ ...row, sealedKey: row.sealedKey }]))
  },
  async reseal(id: string, sealedKey: string): Promise<void> {
    await orm.update(a2aAgents).set({ sealedKey }).where(eq(a2aAgents.id, id))
  },
})
