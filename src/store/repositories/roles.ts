import { and, asc, eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface CustomRole {
  id: string
  orgId: string
  name: string
  permissions: string[]
  archivedAt: Date | null
  createdAt: Date
}

export const rolesRepository = ({ orm, tables: { roles } }: Database) => ({
  async create(role: CustomRole): Promise<void> {
    await orm.insert(roles).values(role)
  },
  /** Scoped by organisation: another organisation's role id finds nothing. */
  async get(orgId: string, id: string): Promise<CustomRole | undefined> {
    const [row] = await orm
      .select()
      .from(roles)
      .where(and(eq(roles.orgId, orgId), eq(roles.id, id)))
      .limit(1)
    return row
  },
  async list(orgId: string): Promise<CustomRole[]> {
    return orm.select().from(roles).where(eq(roles.orgId, orgId)).orderBy(asc(roles.createdAt), asc(roles.id))
  },
  async update(orgId: string, id: string, change: Partial<Pick<CustomRole, 'name' | 'permissions' | 'archivedAt'>>) {
    const [row] = await orm
      .update(roles)
      .set(change)
      .where(and(eq(roles.orgId, orgId), eq(roles.id, id)))
      .returning()
    return row as CustomRole | undefined
  },
})
