import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../database'

export interface Team {
  id: string
  orgId: string
  name: string
  createdAt: Date
}

/** Teams and their members, always within one organisation. */
export const teamsRepository = ({ orm, tables: { teams, teamMembers } }: Database) => ({
  async create(team: Team): Promise<void> {
    await orm.insert(teams).values(team)
  },
  async get(orgId: string, id: string): Promise<Team | undefined> {
    const [row] = await orm
      .select()
      .from(teams)
      .where(and(eq(teams.orgId, orgId), eq(teams.id, id)))
      .limit(1)
    return row
  },
  async findByName(orgId: string, name: string): Promise<Team | undefined> {
    const [row] = await orm
      .select()
      .from(teams)
      .where(and(eq(teams.orgId, orgId), eq(teams.name, name)))
      .limit(1)
    return row
  },
  async list(orgId: string): Promise<Team[]> {
    return orm.select().from(teams).where(eq(teams.orgId, orgId)).orderBy(asc(teams.name))
  },
  async listForUser(orgId: string, userId: string): Promise<Team[]> {
    const mine = orm.select({ id: teamMembers.teamId }).from(teamMembers).where(eq(teamMembers.userId, userId))
    return orm
      .select()
      .from(teams)
      .where(and(eq(teams.orgId, orgId), inArray(teams.id, mine)))
      .orderBy(asc(teams.name))
  },
  async rename(orgId: string, id: string, name: string): Promise<Team | undefined> {
    const [row] = await orm
      .update(teams)
      .set({ name })
      .where(and(eq(teams.orgId, orgId), eq(teams.id, id)))
      .returning()
    return row
  },
  async delete(orgId: string, id: string): Promise<boolean> {
    await orm.delete(teamMembers).where(eq(teamMembers.teamId, id))
    const rows = await orm
      .delete(teams)
      .where(and(eq(teams.orgId, orgId), eq(teams.id, id)))
      .returning({ id: teams.id })
    return rows.length > 0
  },
  async addMember(teamId: string, userId: string): Promise<void> {
    await orm.insert(teamMembers).values({ teamId, userId, createdAt: new Date() }).onConflictDoNothing()
  },
  async removeMember(teamId: string, userId: string): Promise<boolean> {
    const rows = await orm
      .delete(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId)))
      .returning({ userId: teamMembers.userId })
    return rows.length > 0
  },
  async members(teamId: string): Promise<Array<{ userId: string; createdAt: Date }>> {
    return orm
      .select({ userId: teamMembers.userId, createdAt: teamMembers.createdAt })
      .from(teamMembers)
      .where(eq(teamMembers.teamId, teamId))
      .orderBy(asc(teamMembers.createdAt))
  },
  async isMember(teamId: string, userId: string): Promise<boolean> {
    const [row] = await orm
      .select({ userId: teamMembers.userId })
      .from(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId)))
      .limit(1)
    return row !== undefined
  },
})
