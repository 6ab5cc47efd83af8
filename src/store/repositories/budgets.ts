import { and, asc, desc, eq, inArray, lt, or } from 'drizzle-orm'
import { orgRead } from '../compiled-read'
import type { Database } from '../database'
import { orgRows } from '../scope'

export type ScopeKind = 'org' | 'team' | 'member' | 'key' | 'customer' | 'model' | 'provider'
export type Metric = 'usd' | 'tokens' | 'requests'

/** A spend limit; `scopeId` '' means the organisation itself, or every value of the kind on its own. */
export interface BudgetLimit {
  id: string
  orgId: string
  kind: 'window' | 'velocity'
  scopeKind: ScopeKind
  scopeId: string
  metric: Metric
  /** In the metric's unit: nano-USD, tokens or requests. */
  amount: number
  period: 'day' | 'week' | 'month' | 'seconds'
  periodSeconds: number
  action: 'block' | 'downgrade' | 'alert'
  createdAt: Date
  updatedAt: Date
}

export interface DowngradeMapping {
  id: string
  orgId: string
  fromModel: string
  toModel: string
  atPercent: number | null
  createdAt: Date
}

export interface BudgetNotice {
  id: string
  orgId: string
  kind: 'threshold' | 'breach' | 'manual' | 'notify'
  limitId: string | null
  scopeKind: string | null
  scopeId: string | null
  metric: string | null
  windowStart: Date | null
  threshold: number | null
  spent: number | null
  amount: number | null
  message: string | null
  createdBy: string | null
  createdAt: Date
}

/** One organisation's limits: another organisation's limit is not found. */
export const budgetLimitsRepository = ({ orm, dialect, tables: { budgetLimits } }: Database, orgId: string) => {
  const limit = orgRows(budgetLimits, orgId)
  // Read every second for each organisation in use (spend/policy.ts): compiled once (compiled-read.ts).
  const listAll = orgRead<BudgetLimit>({ orm, dialect }, limit, 'budgetLimits.list', (where) =>
    orm.select().from(budgetLimits).where(where()).orderBy(asc(budgetLimits.createdAt), asc(budgetLimits.id)),
  )
  return {
    list(): Promise<BudgetLimit[]> {
      return listAll()
    },
    async get(id: string): Promise<BudgetLimit | undefined> {
      const [row] = await orm
        .select()
        .from(budgetLimits)
        .where(limit.where(eq(budgetLimits.id, id)))
        .limit(1)
      return row
    },
    /** The limit with the same kind, scope, metric and window, which a new one would duplicate. */
    async sameAs(fields: Pick<BudgetLimit, 'kind' | 'scopeKind' | 'scopeId' | 'metric' | 'period' | 'periodSeconds'>) {
      const [row] = await orm
        .select()
        .from(budgetLimits)
        .where(
          limit.where(
            eq(budgetLimits.kind, fields.kind),
            eq(budgetLimits.scopeKind, fields.scopeKind),
            eq(budgetLimits.scopeId, fields.scopeId),
            eq(budgetLimits.metric, fields.metric),
            eq(budgetLimits.period, fields.period),
            eq(budgetLimits.periodSeconds, fields.periodSeconds),
          ),
        )
        .limit(1)
      return row as BudgetLimit | undefined
    },
    async create(fields: Omit<BudgetLimit, 'orgId'>): Promise<void> {
      await orm.insert(budgetLimits).values(limit.row(fields))
    },
    async update(id: string, change: Omit<BudgetLimit, 'id' | 'orgId' | 'createdAt'>): Promise<BudgetLimit | undefined> {
      const [row] = await orm
        .update(budgetLimits)
        .set(change)
        .where(limit.where(eq(budgetLimits.id, id)))
        .returning()
      return row
    },
    /** Deletes a limit of the given kind (a window limit is not deleted through the velocity route). */
    async delete(id: string, kind: BudgetLimit['kind']): Promise<boolean> {
      const rows = await orm
        .delete(budgetLimits)
        .where(limit.where(eq(budgetLimits.id, id), eq(budgetLimits.kind, kind)))
        .returning({ id: budgetLimits.id })
      return rows.length > 0
    },
  }
}

export const downgradeMappingsRepository = ({ orm, dialect, tables: { downgradeMappings } }: Database, orgId: string) => {
  const mapping = orgRows(downgradeMappings, orgId)
  // Read every second for each organisation in use (spend/policy.ts): compiled once (compiled-read.ts).
  const listAll = orgRead<DowngradeMapping>({ orm, dialect }, mapping, 'downgradeMappings.list', (where) =>
    orm.select().from(downgradeMappings).where(where()).orderBy(asc(downgradeMappings.createdAt)),
  )
  return {
    list(): Promise<DowngradeMapping[]> {
      return listAll()
    },
    async findByFrom(fromModel: string): Promise<DowngradeMapping | undefined> {
      const [row] = await orm
        .select()
        .from(downgradeMappings)
        .where(mapping.where(eq(downgradeMappings.fromModel, fromModel)))
        .limit(1)
      return row
    },
    async create(fields: Omit<DowngradeMapping, 'orgId'>): Promise<void> {
      await orm.insert(downgradeMappings).values(mapping.row(fields))
    },
    async update(id: string, change: Pick<DowngradeMapping, 'toModel' | 'atPercent'>): Promise<DowngradeMapping | undefined> {
      const [row] = await orm
        .update(downgradeMappings)
        .set(change)
        .where(mapping.where(eq(downgradeMappings.id, id)))
        .returning()
      return row
    },
    async delete(id: string): Promise<boolean> {
      const rows = await orm
        .delete(downgradeMappings)
        .where(mapping.where(eq(downgradeMappings.id, id)))
        .returning({ id: downgradeMappings.id })
      return rows.length > 0
    },
  }
}

const BREACH_KINDS = ['breach', 'manual'] as const

export const budgetNoticesRepository = ({ orm, tables: { budgetNotices } }: Database, orgId: string) => {
  const notice = orgRows(budgetNotices, orgId)
  return {
    /**
     * Adds a notice; an automatic one (limit, scope value, window and threshold) only once, whoever
     * adds it first: answers whether this call added it.
     */
    async add(fields: Omit<BudgetNotice, 'orgId'>): Promise<boolean> {
      const rows = await orm
        .insert(budgetNotices)
        .values(notice.row(fields))
        .onConflictDoNothing()
        .returning({ id: budgetNotices.id })
      return rows.length > 0
    },
    /** The breach log, newest first, by cursor (the last row's time and id). */
    async breaches(page: { limit: number; before?: { createdAt: Date; id: string } }): Promise<BudgetNotice[]> {
      const { before } = page
      return orm
        .select()
        .from(budgetNotices)
        .where(
          notice.where(
            inArray(budgetNotices.kind, [...BREACH_KINDS]),
            before
              ? or(
                  lt(budgetNotices.createdAt, before.createdAt),
                  and(eq(budgetNotices.createdAt, before.createdAt), lt(budgetNotices.id, before.id)),
                )
              : undefined,
          ),
        )
        .orderBy(desc(budgetNotices.createdAt), desc(budgetNotices.id))
        .limit(page.limit)
    },
  }
}
