import { and, asc, eq } from 'drizzle-orm'
import type { Database } from '../database'

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

/** Every read and write is scoped by organisation: another organisation's rule is not found. */
export const rateLimitRulesRepository = ({ orm, tables: { rateLimitRules } }: Database) => ({
  async create(rule: RateLimitRule): Promise<void> {
    await orm.insert(rateLimitRules).values(rule)
  },
  async list(orgId: string): Promise<RateLimitRule[]> {
    return orm
      .select()
      .from(rateLimitRules)
      .where(eq(rateLimitRules.orgId, orgId))
      .orderBy(asc(rateLimitRules.createdAt), asc(rateLimitRules.id))
  },
  async get(orgId: string, id: string): Promise<RateLimitRule | undefined> {
    const [row] = await orm
      .select()
      .from(rateLimitRules)
      .where(and(eq(rateLimitRules.orgId, orgId), eq(rateLimitRules.id, id)))
      .limit(1)
    return row
  },
  async update(
    orgId: string,
    id: string,
    change: Omit<RateLimitRule, 'id' | 'orgId' | 'createdAt'>,
  ): Promise<RateLimitRule | undefined> {
    const [row] = await orm
      .update(rateLimitRules)
      .set(change)
      .where(and(eq(rateLimitRules.orgId, orgId), eq(rateLimitRules.id, id)))
      .returning()
    return row
  },
  async delete(orgId: string, id: string): Promise<boolean> {
    const rows = await orm
      .delete(rateLimitRules)
      .where(and(eq(rateLimitRules.orgId, orgId), eq(rateLimitRules.id, id)))
      .returning({ id: rateLimitRules.id })
    return rows.length > 0
  },
})
