import { and, eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface Membership {
  orgId: string
  userId: string
  role: string
  createdAt: Date
}

export const membershipsRepository = ({ orm, tables: { memberships } }: Database) => ({
  async add(membership: Membership): Promise<void> {
    await orm.insert(memberships).values(membership)
  },
  async get(orgId: string, userId: string): Promise<Membership | undefined> {
    const [row] = await orm
      .select()
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .limit(1)
    return row
  },
  async ownerOf(orgId: string): Promise<Membership | undefined> {
    const [row] = await orm
      .select()
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')))
      .limit(1)
    return row
  },
  async listForOrg(orgId: string): Promise<Membership[]> {
    return orm.select().from(memberships).where(eq(memberships.orgId, orgId))
  },
  async setRole(orgId: string, userId: string, role: string): Promise<boolean> {
    const rows = await orm
      .update(memberships)
      .set({ role })
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .returning({ userId: memberships.userId })
    return rows.length === 1
  },
  async remove(orgId: string, userId: string): Promise<boolean> {
    const rows = await orm
      .delete(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .returning({ userId: memberships.userId })
    return rows.length === 1
  },
  async listWithRole(orgId: string, role: string): Promise<Membership[]> {
    return orm
      .select()
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, role)))
  },
  async listForUser(userId: string): Promise<Membership[]> {
    return orm.select().from(memberships).where(eq(memberships.userId, userId))
  },
})
