import { and, asc, eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface SavedFilter {
  id: string
  orgId: string
  name: string
  filter: unknown
  createdBy: string | null
  createdAt: Date
  updatedAt: Date
}

/** Saved filters and hidden properties: how an organisation shapes its own traffic views. */
export const savedViewsRepository = ({ orm, tables: { savedFilters, hiddenProperties } }: Database) => ({
  async createFilter(filter: SavedFilter): Promise<void> {
    await orm.insert(savedFilters).values(filter)
  },
  async listFilters(orgId: string): Promise<SavedFilter[]> {
    return orm.select().from(savedFilters).where(eq(savedFilters.orgId, orgId)).orderBy(asc(savedFilters.name))
  },
  async updateFilter(
    orgId: string,
    id: string,
    change: Partial<Pick<SavedFilter, 'name' | 'filter' | 'updatedAt'>>,
  ): Promise<SavedFilter | undefined> {
    const [row] = await orm
      .update(savedFilters)
      .set(change)
      .where(and(eq(savedFilters.orgId, orgId), eq(savedFilters.id, id)))
      .returning()
    return row
  },
  async deleteFilter(orgId: string, id: string): Promise<boolean> {
    const rows = await orm
      .delete(savedFilters)
      .where(and(eq(savedFilters.orgId, orgId), eq(savedFilters.id, id)))
      .returning({ id: savedFilters.id })
    return rows.length > 0
  },
  async hideProperty(orgId: string, key: string, by: string | null): Promise<void> {
    await orm.insert(hiddenProperties).values({ orgId, key, hiddenBy: by, createdAt: new Date() }).onConflictDoNothing()
  },
  async restoreProperty(orgId: string, key: string): Promise<boolean> {
    const rows = await orm
      .delete(hiddenProperties)
      .where(and(eq(hiddenProperties.orgId, orgId), eq(hiddenProperties.key, key)))
      .returning({ key: hiddenProperties.key })
    return rows.length > 0
  },
  async hiddenProperties(orgId: string): Promise<Array<{ key: string; hiddenBy: string | null; createdAt: Date }>> {
    return orm
      .select({ key: hiddenProperties.key, hiddenBy: hiddenProperties.hiddenBy, createdAt: hiddenProperties.createdAt })
      .from(hiddenProperties)
      .where(eq(hiddenProperties.orgId, orgId))
      .orderBy(asc(hiddenProperties.key))
  },
})
