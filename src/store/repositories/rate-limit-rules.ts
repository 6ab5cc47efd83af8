import { asc, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface RateLimitRule {
  id: string
  orgId: string
  quota: number
  windowSeconds: number
  unit: 'request' | 'cents'
  segment: 'global' | 'user' | 'prop' | 'model'
  property: string | null
  createdAt: Date
  updatedAt: Date
}

/** One organisation's token-bucket rules: another organisation's rule is not found. */
export const rateLimitRulesRepository = ({ orm, tables: { rateLimitRules } }: Database, orgId: string) => {
  const rule = orgRows(rateLimitRules, orgId)
  return {
    async create(fields: Omit<RateLimitRule, 'orgId'>): Promise<void> {
      await orm.insert(rateLimitRules).values(rule.row(fields))
    },
    async list(): Promise<RateLimitRule[]> {
      return orm.select().from(rateLimitRules).where(rule.where()).orderBy(asc(rateLimitRules.createdAt), asc(rateLimitRules.id))
    },
    async get(id: string): Promise<RateLimitRule | undefined> {
      const [row] = await orm
        .select()
        .from(rateLimitRules)
        .where(rule.where(eq(rateLimitRules.id, id)))
        .limit(1)
      return row
    },
    async update(id: string, change: Omit<RateLimitRule, 'id' | 'orgId' | 'createdAt'>): Promise<RateLimitRule | undefined> {
      const [row] = await orm
        .update(rateLimitRules)
        .set(change)
        .where(rule.where(eq(rateLimitRules.id, id)))
        .returning()
      return row
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(rateLimitRules)
        .where(rule.where(eq(rateLimitRules.id, id)))
        .returning({ id: rateLimitRules.id })
      return rows.length > 0
    },
  }
}
