import type { OrganizationSettings } from '../modules/organization/model'

type Retention = (typeof OrganizationSettings.static)['requestRetention']

/** What the records' retention is now, and what bounds it, in one sentence. */
function summary({ days, own, operatorDays, budgetWindowDays }: Retention): string {
  if (days === null) return 'Request records are kept forever: this gw sets no bound.'
  const whose = own === null ? "this gw's default" : "this organization's setting"
  const bound = operatorDays === null ? '' : ` This gw keeps them at most ${operatorDays} days.`
  const budgets =
    budgetWindowDays === null ? '' : ` Budgets count them: never fewer than ${budgetWindowDays} days, the longest budget window.`
  return `Request records are kept ${days} days (${whose}).${bound}${budgets}`
}

/**
 * How long the organisation keeps its request records (with their bodies, flags, ratings and scores):
 * the operator's default or fewer days of its own.
 */
export function RecordRetentionForm({
  retention,
  canWrite,
  change,
}: {
  retention: Retention
  canWrite: boolean
  change: (what: string, path: string, body: unknown) => unknown
}) {
  const save = (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    change(
      'Record retention',
      '/v1/organization/request-retention-config',
      data.get('mode') === 'days' ? { mode: 'days', days: Number(data.get('days')) } : { mode: 'default' },
    )
  }
  const bound = retention.operatorDays
  return (
    <form class="setting" onSubmit={save} aria-label="Record retention">
      <fieldset disabled={!canWrite}>
        <legend>Request records</legend>
        <p class="muted">{summary(retention)}</p>
        <label class="check">
          <input type="radio" name="mode" value="default" defaultChecked={retention.own === null} /> This gw's default (
          {bound === null ? 'kept forever' : `${bound} days`})
        </label>
        <label class="check">
          <input type="radio" name="mode" value="days" defaultChecked={retention.own !== null} /> Fewer days, this organization's
          own
        </label>
        <label>
          Days records are kept{bound === null ? '' : ` (at most ${bound})`}
          <input name="days" type="number" min={1} max={bound ?? 3650} defaultValue={String(retention.own ?? bound ?? 90)} />
        </label>
        <button type="submit">Save record retention</button>
      </fieldset>
    </form>
  )
}
