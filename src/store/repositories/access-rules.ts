import { asc, count, eq } from 'drizzle-orm'
import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import { orgRows } from '../scope'

export type AccessSubjectKind = 'org' | 'team' | 'member' | 'role' | 'key'
export type AccessResourceKind = 'provider' | 'model' | 'mcp_server' | 'mcp_tool' | 'agent'

export interface AccessRuleRow {
  id: string
  orgId: string
  subjectKind: AccessSubjectKind
  /** '' for the organisation itself. */
  subjectId: string
  resourceKind: AccessResourceKind
  /** A glob: `*` is any run of characters. */
  resourceId: string
  effect: 'allow' | 'deny'
  reason: string | null
  createdAt: Date
  updatedAt: Date
}

export interface AccessDefaultRow {
  orgId: string
  resourceKind: AccessResourceKind
  effect: 'allow' | 'deny'
  updatedAt: Date
}

/** One organisation's access rules: another organisation's rule is not found. */
export const accessRulesRepository = ({ orm, dialect, tables: { accessRules } }: Database, orgId: string) => {
  const rule = orgRows(accessRules, orgId)
  // Read every few seconds for each organisation in use (governance/policies.ts): compiled once (compiled-read.ts).
  const listAll = orgRead<AccessRuleRow>({ orm, dialect }, rule, 'accessRules.list', (where) =>
    orm.select().from(accessRules).where(where()).orderBy(asc(accessRules.createdAt), asc(accessRules.id)),
  )
  return {
    list(): Promise<AccessRuleRow[]> {
      return listAll()
    },
    async count(): Promise<number> {
      const [row] = await orm.select({ n: count() }).from(accessRules).where(rule.where())
      return Number(row?.n ?? 0)
    },
    async get(id: string): Promise<AccessRuleRow | undefined> {
      const [row] = await orm
        .select()
        .from(accessRules)
        .where(rule.where(eq(accessRules.id, id)))
        .limit(1)
      return row
    },
    async create(fields: Omit<AccessRuleRow, 'orgId'>): Promise<void> {
      await orm.insert(accessRules).values(rule.row(fields))
    },
    async update(
      id: string,
      change: Partial<Omit<AccessRuleRow, 'id' | 'orgId' | 'createdAt'>>,
    ): Promise<AccessRuleRow | undefined> {
      const [row] = await orm
        .update(accessRules)
        .set(change)
        .where(rule.where(eq(accessRules.id, id)))
        .returning()
      return row
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(accessRules)
        .where(rule.where(eq(accessRules.id, id)))
        .returning({ id: accessRules.id })
      return rows.length > 0
    },
  }
}

/** One organisation's defaults per resource kind; a kind without a row allows. */
export const accessDefaultsRepository = ({ orm, dialect, tables: { accessDefaults } }: Database, orgId: string) => {
  const row = orgRows(accessDefaults, orgId)
  const listAll = orgRead<AccessDefaultRow>({ orm, dialect }, row, 'accessDefaults.list', (where) =>
    orm.select().from(accessDefaults).where(where()),
  )
  return {
    list(): Promise<AccessDefaultRow[]> {
      return listAll()
    },
    async set(resourceKind: AccessResourceKind, effect: 'allow' | 'deny', updatedAt: Date): Promise<void> {
      await orm
        .insert(accessDefaults)
        .values(row.row({ resourceKind, effect, updatedAt }))
        .onConflictDoUpdate({ target: [accessDefaults.orgId, accessDefaults.resourceKind], set: { effect, updatedAt } })
    },
    async remove(resourceKind: AccessResourceKind): Promise<void> {
      await orm.delete(accessDefaults).where(row.where(eq(accessDefaults.resourceKind, resourceKind)))
    },
  }
}
