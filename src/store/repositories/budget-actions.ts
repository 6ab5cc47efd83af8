import { and, count, eq, gte, lte, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import type { Grouping } from '../grouping'
import type { CallWindow } from './calls'

/** What a budget did when it was reached; the budget enforcer (a later feature) writes these. */
export interface BudgetAction {
  id: string
  orgId: string
  scope: string
  scopeId: string | null
  action: 'alert' | 'block' | 'downgrade' | 'throttle'
  requestId: string | null
  model: string | null
  amountNano: number | null
  createdAt: Date
}

export const budgetActionsRepository = ({ orm, tables: { budgetActions: actions } }: Database) => {
  const inWindow = (w: CallWindow): SQL =>
    and(eq(actions.orgId, w.orgId), gte(actions.createdAt, w.start), lte(actions.createdAt, w.end)) as SQL
  return {
    async add(action: BudgetAction): Promise<void> {
      await orm.insert(actions).values(action)
    },
    /** Per action and scope (and per time bucket when given): how many, and the spend that set them off. */
    async counts(w: CallWindow, bucket?: Grouping) {
      const rows = await orm
        .select({
          action: actions.action,
          scope: actions.scope,
          ...(bucket ? { bucket: bucket.select } : {}),
          count: count(),
          amountNano: sql<number>`coalesce(sum(${actions.amountNano}), 0)`,
        })
        .from(actions)
        .where(inWindow(w))
        .groupBy(...(bucket ? [actions.action, actions.scope, bucket.groupBy] : [actions.action, actions.scope]))
      return rows.map((r) => ({
        action: r.action,
        scope: r.scope,
        bucket: r.bucket === undefined ? undefined : Number(r.bucket),
        count: Number(r.count),
        amountNano: Number(r.amountNano),
      }))
    },
  }
}
