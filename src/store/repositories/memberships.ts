import { asc, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface Membership {
  orgId: string
  userId: string
  role: string
  createdAt: Date
}

/** Who belongs to one organisation, and with which role. */
export const membershipsRepository = ({ orm, tables: { memberships, users } }: Database, orgId: string) => {
  const member = orgRows(memberships, orgId)
  return {
    async add(fields: Omit<Membership, 'orgId'>): Promise<void> {
      await orm.insert(memberships).values(member.row(fields))
    },
    async get(userId: string): Promise<Membership | undefined> {
      const [row] = await orm
        .select()
        .from(memberships)
        .where(member.where(eq(memberships.userId, userId)))
        .limit(1)
      return row
    },
    async owner(): Promise<Membership | undefined> {
      const [row] = await orm
        .select()
        .from(memberships)
        .where(member.where(eq(memberships.role, 'owner')))
        .limit(1)
      return row
    },
    async list(): Promise<Membership[]> {
      return orm.select().from(memberships).where(member.where())
    },
    /** The members with the email each signs in with, oldest member first. */
    async listWithEmails(): Promise<Array<Membership & { email: string }>> {
      return orm
        .select({
          orgId: memberships.orgId,
          userId: memberships.userId,
          role: memberships.role,
          createdAt: memberships.createdAt,
          email: users.email,
        })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(member.where())
        .orderBy(asc(memberships.createdAt), asc(memberships.userId))
    },
    async setRole(userId: string, role: string): Promise<boolean> {
      const rows = await orm
        .update(memberships)
        .set({ role })
        .where(member.where(eq(memberships.userId, userId)))
        .returning({ userId: memberships.userId })
      return rows.length === 1
    },
    async remove(userId: string): Promise<boolean> {
      const rows = await orm
        .delete(memberships)
        .where(member.where(eq(memberships.userId, userId)))
        .returning({ userId: memberships.userId })
      return rows.length === 1
    },
    async listWithRole(role: string): Promise<Membership[]> {
      return orm
        .select()
        .from(memberships)
        .where(member.where(eq(memberships.role, role)))
    },
  }
}

/** A person's memberships across organisations: for logging in, before any organisation is chosen. */
export const userMembershipsRepository = ({ orm, tables: { memberships } }: Database) => ({
  async listForUser(userId: string): Promise<Membership[]> {
    return orm.select().from(memberships).where(eq(memberships.userId, userId))
  },
})
