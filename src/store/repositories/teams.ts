import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../database'
import { childrenOf, orgRows } from '../scope'
import type { Clock } from '../store'

export interface Team {
  id: string
  orgId: string
  name: string
  createdAt: Date
}

/**
 * One organisation's teams and their members. `team_members` has no organisation of its own: its rows
 * are reached only through the organisation's teams, so another organisation's team id finds no
 * member to read, add or remove.
 */
export const teamsRepository = ({ orm, tables: { teams, teamMembers } }: Database, orgId: string, now: Clock) => {
  const team = orgRows(teams, orgId)
  const membersOf = (teamId: string) => childrenOf(orm, teamMembers.teamId, team, teamId)
  return {
    async create(fields: Omit<Team, 'orgId'>): Promise<void> {
      await orm.insert(teams).values(team.row(fields))
    },
    async get(id: string): Promise<Team | undefined> {
      const [row] = await orm
        .select()
        .from(teams)
        .where(team.where(eq(teams.id, id)))
        .limit(1)
      return row
    },
    async findByName(name: string): Promise<Team | undefined> {
      const [row] = await orm
        .select()
        .from(teams)
        .where(team.where(eq(teams.name, name)))
        .limit(1)
      return row
    },
    async list(): Promise<Team[]> {
      return orm.select().from(teams).where(team.where()).orderBy(asc(teams.name))
    },
    async listForUser(userId: string): Promise<Team[]> {
      const mine = orm.select({ id: teamMembers.teamId }).from(teamMembers).where(eq(teamMembers.userId, userId))
      return orm
        .select()
        .from(teams)
        .where(team.where(inArray(teams.id, mine)))
        .orderBy(asc(teams.name))
    },
    async rename(id: string, name: string): Promise<Team | undefined> {
      const [row] = await orm
        .update(teams)
        .set({ name })
        .where(team.where(eq(teams.id, id)))
        .returning()
      return row
    },
    /** Deletes the team with its members; run it in a transaction. */
    async delete(id: string): Promise<boolean> {
      await orm.delete(teamMembers).where(membersOf(id))
      const rows = await orm
        .delete(teams)
        .where(team.where(eq(teams.id, id)))
        .returning({ id: teams.id })
      return rows.length > 0
    },
    /** Adds a person to one of the organisation's teams; false when the team is not the organisation's. */
    async addMember(teamId: string, userId: string): Promise<boolean> {
      const [parent] = await orm
        .select({ id: teams.id })
        .from(teams)
        .where(team.where(eq(teams.id, teamId)))
        .limit(1)
      if (!parent) return false
      await orm
        .insert(teamMembers)
        .values({ teamId: parent.id, userId, createdAt: new Date(now()) })
        .onConflictDoNothing()
      return true
    },
    async removeMember(teamId: string, userId: string): Promise<boolean> {
      const rows = await orm
        .delete(teamMembers)
        .where(and(membersOf(teamId), eq(teamMembers.userId, userId)))
        .returning({ userId: teamMembers.userId })
      return rows.length > 0
    },
    async members(teamId: string): Promise<Array<{ userId: string; createdAt: Date }>> {
      return orm
        .select({ userId: teamMembers.userId, createdAt: teamMembers.createdAt })
        .from(teamMembers)
        .where(membersOf(teamId))
        .orderBy(asc(teamMembers.createdAt))
    },
    async isMember(teamId: string, userId: string): Promise<boolean> {
      const [row] = await orm
        .select({ userId: teamMembers.userId })
        .from(teamMembers)
        .where(and(membersOf(teamId), eq(teamMembers.userId, userId)))
        .limit(1)
      return row !== undefined
    },
  }
}
