import { useEffect, useRef, useState } from 'preact/hooks'
import type {
  AlertConfig as AlertConfigView,
  Breaches as BreachesView,
  BudgetSettings,
  DowngradeMapping,
  LimitStatus,
  Sent,
  Summary as SummaryView,
  WindowSettings as WindowSettingsView,
} from '../modules/budgets/model'
import { api } from './api'
import { formatCount, formatUsd, formatWhen } from './format'
import { ErrorNote, type PageProps, useAction } from './ui'

type Limit = typeof LimitStatus.static
type WindowSettings = typeof WindowSettingsView.static
type AlertConfig = typeof AlertConfigView.static
type Mapping = typeof DowngradeMapping.static
/** The limits with where each stands, and the settings they follow: two reads, shown together. */
type Summary = { limits: typeof SummaryView.static } & typeof BudgetSettings.static
type BreachPage = typeof BreachesView.static

const SCOPES = [
  { kind: 'org', label: 'the organization' },
  { kind: 'team', label: 'a team' },
  { kind: 'member', label: 'a member' },
  { kind: 'key', label: 'an API key' },
  { kind: 'customer', label: 'a customer (Gw-Customer-Id)' },
  { kind: 'model', label: 'a model' },
  { kind: 'provider', label: 'a provider' },
] as const
const ACTIONS = [
  { action: 'block', label: 'refuse the calls' },
  { action: 'downgrade', label: 'serve the downgrade model' },
  { action: 'alert', label: 'only alert' },
] as const
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const
const CHANNELS = ['webhook', 'slack'] as const
/** The limits are read again this often, so spent and held amounts follow the traffic while the page is open. */
const REFRESH_MS = 15_000
/** Where the server marks a limit as near its end when no alert threshold is set; the bar turns at the same point. */
const DEFAULT_WARNING_PERCENT = 80
const BREACHES_PAGE = 20

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

const amount = (metric: string | null, value: number): string =>
  metric === 'tokens'
    ? `${formatCount(value)} tokens`
    : metric === 'requests'
      ? `${formatCount(value)} requests`
      : formatUsd(value)

const amountOrDash = (metric: string | null, value: number | null) => (value === null ? '-' : amount(metric, value))

function windowText(limit: Limit): string {
  if (limit.kind === 'velocity' && typeof limit.window === 'object') return `in any ${formatCount(limit.window.seconds)} s`
  return typeof limit.window === 'object' ? `per ${formatCount(limit.window.seconds)} s` : `per ${limit.window}`
}

function scopeText(scope: { kind: string | null; id: string | null }): string {
  if (scope.kind === null) return '-'
  if (scope.kind === 'org') return 'the organization'
  return scope.id === null ? `each ${scope.kind}` : `${scope.kind} ${scope.id}`
}

const describeLimit = (limit: Limit) => `${amount(limit.metric, limit.limit)} ${windowText(limit)}, ${scopeText(limit.scope)}`

/** The spend controls: every limit with where it stands now, the windows and alerts they follow, downgrades and breaches. */
export function Budgets({ can }: PageProps) {
  const canWrite = can('spend_controls.write')
  const [summary, setSummary] = useState<Summary>()
  const [readAt, setReadAt] = useState<Date>()
  const [readError, setReadError] = useState<string>()
  const reload = async () => {
    const [limits, settings] = await Promise.all([
      api<typeof SummaryView.static>('GET', '/v1/budget/summary'),
      api<typeof BudgetSettings.static>('GET', '/v1/budget/settings'),
    ])
    setSummary({ limits, ...settings })
    setReadAt(new Date())
    setReadError(undefined)
  }
  const load = () => reload().catch((failure: Error) => setReadError(failure.message))
  useEffect(() => {
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [])

  return (
    <section aria-labelledby="budgets">
      <h1 id="budgets">Budgets</h1>
      <p class="muted">
        Limits on spend, tokens or requests over a window. A call is checked against every limit that covers it before it is sent:
        its worst case is held, then settled at what it cost.
      </p>
      <ErrorNote error={readError} />
      {!summary && !readError && <p class="muted">Loading…</p>}
      {summary && (
        <>
          <Limits summary={summary} readAt={readAt} canWrite={canWrite} reload={reload} onRefresh={load} />
          <Windows settings={summary.windowSettings} canWrite={canWrite} reload={reload} />
          <Alerts config={summary.alertConfig} canWrite={canWrite} reload={reload} />
          <Downgrades mappings={summary.downgradeMappings} canWrite={canWrite} reload={reload} />
          <Breaches limits={summary.limits} canWrite={canWrite} />
        </>
      )}
    </section>
  )
}

/** A section's changes: its failure is shown beside its own form, and the summary is read again after each. */
function useChange(reload: () => Promise<void>) {
  const { error, run } = useAction()
  const change = (action: () => Promise<unknown>) =>
    run(async () => {
      await action()
      await reload()
    })
  return { error, change }
}

interface SectionProps {
  canWrite: boolean
  reload(): Promise<void>
}

function Limits({
  summary,
  readAt,
  canWrite,
  reload,
  onRefresh,
}: SectionProps & { summary: Summary; readAt: Date | undefined; onRefresh(): void }) {
  const { error, change } = useChange(reload)
  const [editing, setEditing] = useState<Limit>()
  const forms = useRef<HTMLDivElement>(null)
  const warnAt = summary.alertConfig.thresholds[0] ?? DEFAULT_WARNING_PERCENT
  const edit = (limit: Limit) => {
    setEditing(limit)
    forms.current?.scrollIntoView({ block: 'start' })
  }
  const remove = (limit: Limit) =>
    change(async () => {
      await api('DELETE', `/v1/budget/${limit.kind}-limit/${encodeURIComponent(limit.id)}`)
      if (editing?.id === limit.id) setEditing(undefined)
    })
  const saved = async (save: () => Promise<unknown>) => {
    const done = await change(save)
    if (done) setEditing(undefined)
    return done
  }
  const { limits } = summary
  return (
    <section aria-labelledby="limits">
      <h2 id="limits">Limits</h2>
      <div class="toolbar">
        <span class="muted">
          Read at {readAt ? readAt.toLocaleTimeString() : '-'}; times are in your own time zone, calendar windows follow{' '}
          {summary.windowSettings.timezone}.
        </span>
        <button type="button" class="quiet" onClick={onRefresh}>
          Refresh
        </button>
      </div>
      <ErrorNote error={error} />
      {limits.length === 0 && <p class="muted">No limits: calls are held only to the organization's credits.</p>}
      {limits.length > 0 && (
        <table aria-label="Limits">
          <thead>
            <tr>
              <th scope="col">Applies to</th>
              <th scope="col">Limit</th>
              <th scope="col">Used</th>
              <th scope="col">Spent</th>
              <th scope="col">Held</th>
              <th scope="col">Remaining</th>
              <th scope="col">Window</th>
              <th scope="col">Status</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {limits.map((limit) => (
              <LimitRow
                key={limit.id}
                limit={limit}
                warnAt={warnAt}
                canWrite={canWrite}
                onEdit={() => edit(limit)}
                onDelete={() => remove(limit)}
              />
            ))}
          </tbody>
        </table>
      )}
      {canWrite && (
        <div class="tops" ref={forms}>
          <WindowLimitForm
            key={editing?.kind === 'window' ? editing.id : 'new'}
            editing={editing?.kind === 'window' ? editing : undefined}
            onSave={(body) => saved(() => api('PUT', '/v1/budget/window-limit', body))}
            onCancel={() => setEditing(undefined)}
          />
          <VelocityLimitForm
            key={editing?.kind === 'velocity' ? editing.id : 'new'}
            editing={editing?.kind === 'velocity' ? editing : undefined}
            onSave={(body) => saved(() => api('PUT', '/v1/budget/velocity-limit', body))}
            onCancel={() => setEditing(undefined)}
          />
        </div>
      )}
    </section>
  )
}

function LimitRow({
  limit,
  warnAt,
  canWrite,
  onEdit,
  onDelete,
}: {
  limit: Limit
  warnAt: number
  canWrite: boolean
  onEdit(): void
  onDelete(): void
}) {
  const described = describeLimit(limit)
  const measured = limit.status !== 'per_value' && limit.spent !== null
  const used = (limit.spent ?? 0) + (limit.reserved ?? 0)
  const low = (limit.limit * warnAt) / 100
  // A full bar sits on the high boundary, which is still the middle (amber) region: an exceeded limit
  // lowers the boundary so its bar is red.
  return (
    <tr data-limit={limit.id}>
      <td>{scopeText(limit.scope)}</td>
      <td>
        {amount(limit.metric, limit.limit)} {windowText(limit)}
        <br />
        <span class="muted">then {ACTIONS.find((a) => a.action === limit.action)?.label ?? limit.action}</span>
      </td>
      {measured ? (
        <>
          <td>
            <meter
              min={0}
              max={limit.limit}
              value={Math.min(used, limit.limit)}
              low={low}
              high={limit.status === 'exceeded' ? low : limit.limit}
              optimum={0}
              aria-label={`Used of ${described}`}
            />{' '}
            <span data-used>{percent.format(used / limit.limit)}</span>
          </td>
          <td data-spent>{amountOrDash(limit.metric, limit.spent)}</td>
          <td>{amountOrDash(limit.metric, limit.reserved)}</td>
          <td data-remaining>{amountOrDash(limit.metric, limit.remaining)}</td>
          <td>
            {formatWhen(limit.windowStart)}
            <br />
            <span class="muted">to {formatWhen(limit.windowEnd)}</span>
          </td>
        </>
      ) : (
        <td colSpan={5} class="muted">
          Applies to each {limit.scope.kind} on its own: there is no one figure to show.
        </td>
      )}
      <td data-status={limit.status}>
        {limit.status === 'warning' ? 'near the limit' : limit.status === 'per_value' ? 'per value' : limit.status}
      </td>
      {canWrite && (
        <td>
          <div class="row-actions">
            <button type="button" class="quiet" onClick={onEdit} aria-label={`Edit ${described}`}>
              Edit
            </button>
            <button type="button" class="danger" onClick={onDelete} aria-label={`Delete ${described}`}>
              Delete
            </button>
          </div>
        </td>
      )}
    </tr>
  )
}

/** What a limit covers, from a form's `scopeKind` and `scopeId`: without an id, each value of the kind on its own. */
function scopeOf(data: FormData): { kind: string; id?: string } {
  const kind = String(data.get('scopeKind'))
  const id = String(data.get('scopeId') ?? '').trim()
  return id ? { kind, id } : { kind }
}

function ScopeFields({ editing }: { editing: Limit | undefined }) {
  return (
    <>
      <label>
        Applies to
        <select name="scopeKind" defaultValue={editing?.scope.kind ?? 'org'}>
          {SCOPES.map((scope) => (
            <option key={scope.kind} value={scope.kind}>
              {scope.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Which one (its id or name; empty: each one on its own)
        <input name="scopeId" maxLength={256} defaultValue={editing?.scope.id ?? ''} />
      </label>
    </>
  )
}

function ActionField({ editing }: { editing: Limit | undefined }) {
  return (
    <label>
      When reached
      <select name="action" defaultValue={editing?.action ?? 'block'}>
        {ACTIONS.map((a) => (
          <option key={a.action} value={a.action}>
            {a.label}
          </option>
        ))}
      </select>
    </label>
  )
}

interface LimitFormProps {
  editing: Limit | undefined
  onSave(body: Record<string, unknown>): Promise<boolean>
  onCancel(): void
}

function FormButtons({ editing, save, onCancel }: { editing: Limit | undefined; save: string; onCancel(): void }) {
  return (
    <div class="actions">
      <button type="submit">{editing ? 'Save changes' : save}</button>
      {editing && (
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  )
}

function WindowLimitForm({ editing, onSave, onCancel }: LimitFormProps) {
  const current = editing?.window
  const [period, setPeriod] = useState(typeof current === 'object' ? 'seconds' : (current ?? 'month'))
  const [round, setRound] = useState(0)
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const saved = await onSave({
      ...(editing ? { id: editing.id } : {}),
      scope: scopeOf(data),
      metric: data.get('metric'),
      limit: Number(data.get('limit')),
      window: period === 'seconds' ? { seconds: Number(data.get('seconds')) } : period,
      action: data.get('action'),
    })
    if (!saved) return
    // A new form rather than form.reset(): the reset would move the window's select off the state it shows.
    setPeriod('month')
    setRound((count) => count + 1)
  }
  const name = editing ? 'Change a window limit' : 'New window limit'
  return (
    <form class="setting" onSubmit={submit} aria-label={name} key={round}>
      <fieldset>
        <legend>{name}</legend>
        <ScopeFields editing={editing} />
        <label>
          Measure
          <select name="metric" defaultValue={editing?.metric ?? 'usd'}>
            <option value="usd">USD</option>
            <option value="tokens">tokens</option>
            <option value="requests">requests</option>
          </select>
        </label>
        <label>
          Limit (USD, tokens or requests)
          <input name="limit" type="number" min={0} step="any" required defaultValue={editing ? String(editing.limit) : ''} />
        </label>
        <label>
          Window
          <select name="window" value={period} onChange={(event) => setPeriod((event.currentTarget as HTMLSelectElement).value)}>
            <option value="day">calendar day</option>
            <option value="week">calendar week</option>
            <option value="month">calendar month</option>
            <option value="seconds">fixed seconds</option>
          </select>
        </label>
        {period === 'seconds' && (
          <label>
            Seconds (60 or more)
            <input
              name="seconds"
              type="number"
              min={60}
              max={366 * 86_400}
              step={1}
              required
              defaultValue={typeof current === 'object' ? String(current.seconds) : '3600'}
            />
          </label>
        )}
        <ActionField editing={editing} />
        <FormButtons editing={editing} save="Add window limit" onCancel={onCancel} />
      </fieldset>
    </form>
  )
}

function VelocityLimitForm({ editing, onSave, onCancel }: LimitFormProps) {
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const saved = await onSave({
      ...(editing ? { id: editing.id } : {}),
      scope: scopeOf(data),
      maxUsd: Number(data.get('maxUsd')),
      windowSeconds: Number(data.get('windowSeconds')),
      action: data.get('action'),
    })
    if (saved) form.reset()
  }
  const name = editing ? 'Change a velocity limit' : 'New velocity limit'
  return (
    <form class="setting" onSubmit={submit} aria-label={name}>
      <fieldset>
        <legend>{name}</legend>
        <p class="muted">USD in any sliding span of 10 to 3600 seconds: it stops a runaway loop within the minute.</p>
        <ScopeFields editing={editing} />
        <label>
          Most USD
          <input name="maxUsd" type="number" min={0} step="any" required defaultValue={editing ? String(editing.limit) : ''} />
        </label>
        <label>
          In any (seconds)
          <input
            name="windowSeconds"
            type="number"
            min={10}
            max={3600}
            step={1}
            required
            defaultValue={typeof editing?.window === 'object' ? String(editing.window.seconds) : '60'}
          />
        </label>
        <ActionField editing={editing} />
        <FormButtons editing={editing} save="Add velocity limit" onCancel={onCancel} />
      </fieldset>
    </form>
  )
}

/** The calendar the day, week and month windows follow. */
function Windows({ settings, canWrite, reload }: SectionProps & { settings: WindowSettings }) {
  const { error, change } = useChange(reload)
  const save = (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    change(() =>
      api('PUT', '/v1/budget/window-settings', {
        timezone: String(data.get('timezone')).trim(),
        weekStart: Number(data.get('weekStart')),
        monthStartDay: Number(data.get('monthStartDay')),
      }),
    )
  }
  return (
    <section aria-labelledby="windows">
      <h2 id="windows">Calendar windows</h2>
      <ErrorNote error={error} />
      {canWrite ? (
        <form class="setting" onSubmit={save} aria-label="Calendar windows" key={JSON.stringify(settings)}>
          <fieldset>
            <legend>Days, weeks and months begin</legend>
            <label>
              Time zone (IANA, such as Europe/Paris)
              <input name="timezone" required maxLength={64} defaultValue={settings.timezone} />
            </label>
            <label>
              Week starts on
              <select name="weekStart" defaultValue={String(settings.weekStart)}>
                {WEEKDAYS.map((day, at) => (
                  <option key={day} value={String(at + 1)}>
                    {day}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Month starts on day
              <input name="monthStartDay" type="number" min={1} max={28} required defaultValue={String(settings.monthStartDay)} />
            </label>
            <button type="submit">Save windows</button>
          </fieldset>
        </form>
      ) : (
        <dl class="facts">
          <div>
            <dt>Time zone</dt>
            <dd>{settings.timezone}</dd>
          </div>
          <div>
            <dt>Week starts on</dt>
            <dd>{WEEKDAYS[settings.weekStart - 1] ?? settings.weekStart}</dd>
          </div>
          <div>
            <dt>Month starts on day</dt>
            <dd>{settings.monthStartDay}</dd>
          </div>
        </dl>
      )}
    </section>
  )
}

/** `50, 80 100` into percentages; what is not a number is sent as it is, for the API to name. */
const thresholdsOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((part) => Number(part.replace(/%$/, '')))

function Alerts({ config, canWrite, reload }: SectionProps & { config: AlertConfig }) {
  const { error, change } = useChange(reload)
  const save = (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    change(() =>
      api('PUT', '/v1/budget/alert-config', {
        thresholds: thresholdsOf(String(data.get('thresholds') ?? '')),
        channels: data.getAll('channel').map(String),
      }),
    )
  }
  const reset = () => change(() => api('DELETE', '/v1/budget/alert-config'))
  const thresholds = config.thresholds.length === 0 ? 'none: breaches only' : config.thresholds.map((t) => `${t}%`).join(', ')
  return (
    <section aria-labelledby="alerts">
      <h2 id="alerts">Alerts</h2>
      <p class="muted" data-alert-config>
        {config.configured
          ? `Alerts at ${thresholds} of each limit, on ${config.channels.join(' and ')}.`
          : 'The default: breaches only, sent to the webhooks that subscribe to budget.breached.'}
      </p>
      <ErrorNote error={error} />
      {canWrite && (
        <form class="setting" onSubmit={save} aria-label="Alerts" key={JSON.stringify(config)}>
          <fieldset>
            <legend>When and where alerts go</legend>
            <label>
              Thresholds (% of each limit, up to 10, such as 50, 80, 100)
              <input name="thresholds" defaultValue={config.thresholds.join(', ')} />
            </label>
            <fieldset>
              <legend>Channels</legend>
              {CHANNELS.map((channel) => (
                <label class="check" key={channel}>
                  <input type="checkbox" name="channel" value={channel} defaultChecked={config.channels.includes(channel)} />{' '}
                  {channel}
                </label>
              ))}
            </fieldset>
            <div class="actions">
              <button type="submit">Save alerts</button>
              {config.configured && (
                <button type="button" class="quiet" onClick={reset}>
                  Reset to the default
                </button>
              )}
            </div>
          </fieldset>
        </form>
      )}
    </section>
  )
}

/** Which model is served instead when a downgrade limit is reached, or nears it. */
function Downgrades({ mappings, canWrite, reload }: SectionProps & { mappings: Mapping[] }) {
  const { error, change } = useChange(reload)
  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const atPercent = String(data.get('atPercent') ?? '').trim()
    const added = await change(() =>
      api('POST', '/v1/budget/downgrade-mappings', {
        fromModel: String(data.get('fromModel')).trim(),
        toModel: String(data.get('toModel')).trim(),
        ...(atPercent ? { atPercent: Number(atPercent) } : {}),
      }),
    )
    if (added) form.reset()
  }
  const remove = (mapping: Mapping) =>
    change(() => api('DELETE', `/v1/budget/downgrade-mappings/${encodeURIComponent(mapping.id)}`))
  return (
    <section aria-labelledby="downgrades">
      <h2 id="downgrades">Downgrades</h2>
      <p class="muted">Used by the limits whose action is to serve the downgrade model.</p>
      <ErrorNote error={error} />
      {mappings.length === 0 && <p class="muted">No downgrade mappings.</p>}
      {mappings.length > 0 && (
        <table aria-label="Downgrade mappings">
          <thead>
            <tr>
              <th scope="col">From model</th>
              <th scope="col">To model</th>
              <th scope="col">From when</th>
              <th scope="col">Added</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {mappings.map((mapping) => (
              <tr key={mapping.id}>
                <td>
                  <code>{mapping.fromModel}</code>
                </td>
                <td>
                  <code>{mapping.toModel}</code>
                </td>
                <td>{mapping.atPercent === null ? 'when the limit is reached' : `from ${mapping.atPercent}% of the limit`}</td>
                <td>{formatWhen(mapping.createdAt)}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => remove(mapping)}
                      aria-label={`Delete the downgrade of ${mapping.fromModel}`}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {canWrite && (
        <form class="inline" onSubmit={add} aria-label="New downgrade mapping">
          <label>
            From model (* for any run of characters)
            <input name="fromModel" required maxLength={256} placeholder="gpt-4o*" />
          </label>
          <label>
            To model
            <input name="toModel" required maxLength={256} placeholder="gpt-4o-mini" />
          </label>
          <label>
            From % of the limit (empty: when reached)
            <input name="atPercent" type="number" min={1} max={100} step={1} />
          </label>
          <button type="submit">Add downgrade</button>
        </form>
      )}
    </section>
  )
}

const breachKind = (kind: string) => (kind === 'manual' ? 'recorded by hand' : kind === 'breach' ? 'automatic' : kind)

/** The breach log, newest first a page at a time; those who set the controls record a breach or test the channels. */
function Breaches({ limits, canWrite }: { limits: Limit[]; canWrite: boolean }) {
  const [pages, setPages] = useState<BreachPage[]>([])
  const [readError, setReadError] = useState<string>()
  const [sent, setSent] = useState<number>()
  const { error, run } = useAction()
  const load = async (cursor?: string) => {
    const query = new URLSearchParams({ limit: String(BREACHES_PAGE), ...(cursor ? { cursor } : {}) })
    try {
      const page = await api<BreachPage>('GET', `/v1/budget/breaches?${query}`)
      setPages((loaded) => (cursor ? [...loaded, page] : [page]))
      setReadError(undefined)
    } catch (failure) {
      setReadError((failure as Error).message)
    }
  }
  useEffect(() => {
    load()
  }, [])

  const record = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const limitId = String(data.get('limitId') ?? '')
    const spent = String(data.get('spent') ?? '').trim()
    const recorded = await run(async () => {
      await api('POST', '/v1/budget/breach', {
        message: String(data.get('message')).trim(),
        ...(limitId ? { limitId } : {}),
        ...(spent ? { spent: Number(spent) } : {}),
      })
      await load()
    })
    if (recorded) form.reset()
  }
  const notify = () =>
    run(async () => {
      setSent(undefined)
      setSent((await api<typeof Sent.static>('POST', '/v1/budget/notify', {})).deliveries)
    })

  const breaches = pages.flatMap((page) => page.breaches)
  const next = pages.at(-1)?.nextCursor
  return (
    <section aria-labelledby="breaches">
      <h2 id="breaches">Breach log</h2>
      <ErrorNote error={readError} />
      {canWrite && (
        <>
          <form class="inline" onSubmit={record} aria-label="Record a breach">
            <label>
              What was breached
              <input name="message" required maxLength={2000} />
            </label>
            <label>
              Limit breached
              <select name="limitId">
                <option value="">none</option>
                {limits.map((limit) => (
                  <option key={limit.id} value={limit.id}>
                    {describeLimit(limit)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Spent (in the limit's unit; USD without one)
              <input name="spent" type="number" min={0} step="any" />
            </label>
            <button type="submit">Record breach</button>
          </form>
          <div class="toolbar">
            <button type="button" class="quiet" onClick={notify}>
              Send a test notice
            </button>
            {sent !== undefined && (
              <span role="status" data-notice-sent>
                {sent === 0
                  ? 'Test notice sent: no delivery queued (no webhook or Slack channel takes budget alerts)'
                  : `Test notice sent: ${formatCount(sent)} ${sent === 1 ? 'delivery' : 'deliveries'} queued`}
              </span>
            )}
          </div>
          <ErrorNote error={error} />
        </>
      )}
      {pages.length === 0 && !readError && <p class="muted">Loading…</p>}
      {pages.length > 0 && breaches.length === 0 && <p class="muted">No breaches.</p>}
      {breaches.length > 0 && (
        <table aria-label="Breaches">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">How</th>
              <th scope="col">Applies to</th>
              <th scope="col">Spent</th>
              <th scope="col">Of</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {breaches.map((breach) => (
              <tr key={breach.id}>
                <td>{formatWhen(breach.createdAt)}</td>
                <td>{breachKind(breach.kind)}</td>
                <td>{scopeText(breach.scope)}</td>
                <td>{amountOrDash(breach.metric, breach.spent)}</td>
                <td>{amountOrDash(breach.metric, breach.limit)}</td>
                <td>{breach.message ?? '-'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <div class="actions">
          <button type="button" class="quiet" onClick={() => load(next)}>
            More breaches
          </button>
        </div>
      )}
    </section>
  )
}
