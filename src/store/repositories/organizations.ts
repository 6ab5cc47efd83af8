import { eq, type Placeholder, sql } from 'drizzle-orm'
import type { Tier } from '../../auth/tiers'
import { rowById } from '../compiled-read'
import type { Database } from '../database'

export const TEAM_VISIBILITY = ['all', 'members'] as const
export type TeamVisibility = (typeof TEAM_VISIBILITY)[number]

/**
 * Tables that name an organisation without a foreign key (logs written at volume, where a key would
 * cost every insert): deleting an organisation deletes their rows explicitly.
 */
const ORG_LOGS = [
  'requestBodies',
  'requestFlags',
  'requestFeedback',
  'requestScores',
  'sessionFeedback',
  'sessionTags',
  'requests',
  'mcpToolCalls',
  'a2aCalls',
  'budgetActions',
] as const

export interface Organization {
  id: string
  name: string
  tier: Tier
  teamVisibility: TeamVisibility
  creditBalanceNano: number
  createdAt: Date
}

export const organizationsRepository = ({ orm, dialect, tables }: Database) => {
  // The other tables are read when an organisation is deleted, not here: each is made on first read.
  const { organizations } = tables
  const addCreditsStatement = (id: string | Placeholder, nanoUsd: number | Placeholder) =>
    orm
      .update(organizations)
      .set({ creditBalanceNano: sql`${organizations.creditBalanceNano} + ${nanoUsd}` })
      .where(eq(organizations.id, id))
      .returning({ balance: organizations.creditBalanceNano })
  // The request log's writer takes credits in every batch: on SQLite the statement is built and
  // compiled once, not anew by drizzle and SQLite for each batch.
  let addCreditsPrepared: ReturnType<ReturnType<typeof addCreditsStatement>['prepare']> | undefined
  const organizationById = rowById<Organization>({ orm, dialect }, organizations)
  return {
    async create(org: Omit<Organization, 'teamVisibility'> & { teamVisibility?: TeamVisibility }): Promise<void> {
      await orm.insert(organizations).values(org)
    },
    /** Read with every credential the authenticator looks up: compiled once (compiled-read.ts). */
    get(id: string): Promise<Organization | undefined> {
      return organizationById(id)
    },
    /**
     * Deletes the organisation and everything of it: the tables that reference it go by cascade, the
     * logs that only name it (ORG_LOGS and the audit log) are deleted here. Run it in a transaction.
     */
    async deleteWithData(id: string): Promise<boolean> {
      for (const name of ORG_LOGS) await orm.delete(tables[name]).where(eq(tables[name].orgId, id))
      await orm.delete(tables.auditLog).where(eq(tables.auditLog.orgId, id))
      const rows = await orm.delete(organizations).where(eq(organizations.id, id)).returning({ id: organizations.id })
      return rows.length > 0
    },
    async listIds(): Promise<string[]> {
      return (await orm.select({ id: organizations.id }).from(organizations)).map((r) => r.id)
    },
    async rename(id: string, name: string): Promise<void> {
      await orm.update(organizations).set({ name }).where(eq(organizations.id, id))
    },
    async setTeamVisibility(id: string, teamVisibility: TeamVisibility): Promise<void> {
      await orm.update(organizations).set({ teamVisibility }).where(eq(organizations.id, id))
    },
    async setTier(id: string, tier: Tier): Promise<void> {
      await orm.update(organizations).set({ tier }).where(eq(organizations.id, id))
    },
    /** Adds (or with a negative amount, takes) credits in one statement, so concurrent calls never lose an update. */
    async addCredits(id: string, nanoUsd: number): Promise<number | undefined> {
      if (dialect === 'sqlite') {
        addCreditsPrepared ??= addCreditsStatement(sql.placeholder('id'), sql.placeholder('nanoUsd')).prepare()
        return addCreditsPrepared.get({ id, nanoUsd })?.balance
      }
      const [row] = await addCreditsStatement(id, nanoUsd)
      return row?.balance
    },
  }
}
