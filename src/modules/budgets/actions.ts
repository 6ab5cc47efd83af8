import type { Principal } from '../../auth/principal'
import { nanoToUsd } from '../../money/cost'
import { bucketName, bucketSql, bucketsOf, parseWindow } from '../../query/time'
import type { Store } from '../../store/store'
import { type ActionsInput, BUDGET_ACTIONS } from './model'

/**
 * What budgets did when they were reached (spec 4.6 `traffic.read`): alerts, blocks, downgrades and
 * throttles, by budget scope and over time. Budgets themselves are a later feature; until they land
 * these answer from the empty table.
 */
export class BudgetActionViews {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async breakdown(principal: Principal, input: ActionsInput) {
    const { start, end } = parseWindow(input, this.now())
    const rows = await this.store.budgetActions.counts({ orgId: principal.orgId, start, end })
    return rows
      .map((r) => ({ action: r.action, scope: r.scope, count: r.count, amount: nanoToUsd(r.amountNano) }))
      .sort((a, b) => b.count - a.count || a.action.localeCompare(b.action) || a.scope.localeCompare(b.scope))
  }

  /** Per time bucket, how many of each action; every bucket and every action present. */
  async overTime(principal: Principal, input: ActionsInput) {
    const window = parseWindow(input, this.now())
    const rows = await this.store.budgetActions.counts(
      { orgId: principal.orgId, start: window.start, end: window.end },
      bucketSql(this.store.schema, window, this.store.schema.tables.budgetActions.createdAt),
    )
    const found = new Map<string, number>()
    for (const r of rows) found.set(`${r.bucket}|${r.action}`, (found.get(`${r.bucket}|${r.action}`) ?? 0) + r.count)
    return bucketsOf(window).map((bucket) => ({
      time: bucketName(bucket),
      values: Object.fromEntries(BUDGET_ACTIONS.map((a) => [a, found.get(`${bucket}|${a}`) ?? 0])),
    }))
  }
}
