import { asc, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface CustomRole {
  id: string
  orgId: string
  name: string
  permissions: string[]
  archivedAt: Date | null
  createdAt: Date
}

/** One organisation's custom roles: another organisation's role id finds nothing. */
export const rolesRepository = ({ orm, tables: { roles } }: Database, orgId: string) => {
  const role = orgRows(roles, orgId)
  return {
    async create(fields: Omit<CustomRole, 'orgId'>): Promise<void> {
      await orm.insert(roles).values(role.row(fields))
    },
    async get(id: string): Promise<CustomRole | undefined> {
      const [row] = await orm
        .select()
        .from(roles)
        .where(role.where(eq(roles.id, id)))
        .limit(1)
      return row
    },
    async list(): Promise<CustomRole[]> {
      return orm.select().from(roles).where(role.where()).orderBy(asc(roles.createdAt), asc(roles.id))
    },
    async update(id: string, change: Partial<Pick<CustomRole, 'name' | 'permissions' | 'archivedAt'>>) {
      const [row] = await orm
        .update(roles)
        .set(change)
        .where(role.where(eq(roles.id, id)))
        .returning()
      return row as CustomRole | undefined
    },
  }
}
