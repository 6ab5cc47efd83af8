import { asc, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'
import type { Clock } from '../store'

export interface SavedFilter {
  id: string
  orgId: string
  name: string
  filter: unknown
  createdBy: string | null
  createdAt: Date
  updatedAt: Date
}

/** Saved filters and hidden properties: how one organisation shapes its own traffic views. */
export const savedViewsRepository = (
  { orm, tables: { savedFilters, hiddenProperties } }: Database,
  orgId: string,
  now: Clock,
) => {
  const filters = orgRows(savedFilters, orgId)
  const hidden = orgRows(hiddenProperties, orgId)
  return {
    async createFilter(fields: Omit<SavedFilter, 'orgId'>): Promise<void> {
      await orm.insert(savedFilters).values(filters.row(fields))
    },
    async listFilters(): Promise<SavedFilter[]> {
      return orm.select().from(savedFilters).where(filters.where()).orderBy(asc(savedFilters.name))
    },
    async updateFilter(
      id: string,
      change: Partial<Pick<SavedFilter, 'name' | 'filter' | 'updatedAt'>>,
    ): Promise<SavedFilter | undefined> {
      const [row] = await orm
        .update(savedFilters)
        .set(change)
        .where(filters.where(eq(savedFilters.id, id)))
        .returning()
      return row
    },
    async deleteFilter(id: string): Promise<boolean> {
      const rows = await orm
        .delete(savedFilters)
        .where(filters.where(eq(savedFilters.id, id)))
        .returning({ id: savedFilters.id })
      return rows.length > 0
    },
    async hideProperty(key: string, by: string | null): Promise<void> {
      await orm
        .insert(hiddenProperties)
        .values(hidden.row({ key, hiddenBy: by, createdAt: new Date(now()) }))
        .onConflictDoNothing()
    },
    async restoreProperty(key: string): Promise<boolean> {
      const rows = await orm
        .delete(hiddenProperties)
        .where(hidden.where(eq(hiddenProperties.key, key)))
        .returning({ key: hiddenProperties.key })
      return rows.length > 0
    },
    async hiddenProperties(): Promise<Array<{ key: string; hiddenBy: string | null; createdAt: Date }>> {
      return orm
        .select({ key: hiddenProperties.key, hiddenBy: hiddenProperties.hiddenBy, createdAt: hiddenProperties.createdAt })
        .from(hiddenProperties)
        .where(hidden.where())
        .orderBy(asc(hiddenProperties.key))
    },
  }
}
