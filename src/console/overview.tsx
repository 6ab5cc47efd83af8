import { useEffect, useState } from 'preact/hooks'
import type { CacheSavingsResult, Group as GroupView, PropertyKeys } from '../modules/analytics/model'
import { api } from './api'
import { Chart, type SeriesPoint } from './chart'
import { formatCount, formatMs, formatMsAxis, formatUsd } from './format'
import { timeWindow, WindowBar, type WindowId, windowOf } from './time-window'
import { ErrorNote } from './ui'

type Group = typeof GroupView.static

/** The window's figures, gathered from several metrics. */
interface Figures {
  requests: number
  cost: number
  errors: number
  latencyMs: number | null
  timeToFirstTokenMs: number | null
  cacheHits: number
  /** USD the response cache's hits would have cost. */
  cacheSavings: number
}

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

/**
 * What a metric answers. Its schema is made from the metric's spec when the routes are built, so there
 * is no static type to take: a scalar is its measures, a series its points with theirs.
 */
type Scalar<M extends string, V = number> = Record<M, V>
type Rows = Array<Record<string, unknown>>

/** A chart: its title, the metric that answers it, the measure it draws, and how its values and axis read. */
interface ChartSpec {
  title: string
  metric: string
  measure: string
  format(value: number): string
  axisFormat?(value: number): string
  whole: boolean
}

const CHARTS: readonly ChartSpec[] = [
  { title: 'Requests', metric: 'requestOverTime', measure: 'count', format: formatCount, whole: true },
  {
    title: 'Cost',
    metric: 'costOverTime',
    measure: 'cost',
    format: formatUsd,
    axisFormat: (value: number) => formatUsd(value, { exact: true }),
    whole: false,
  },
  { title: 'Errors', metric: 'errorOverTime', measure: 'errors', format: formatCount, whole: true },
  { title: 'Latency', metric: 'latencyOverTime', measure: 'latencyMs', format: formatMs, axisFormat: formatMsAxis, whole: false },
  {
    title: 'Time to first token',
    metric: 'timeToFirstToken',
    measure: 'timeToFirstTokenMs',
    format: formatMs,
    axisFormat: formatMsAxis,
    whole: false,
  },
]

const BUCKETS = [
  { id: 'min', label: 'Minute' },
  { id: 'hour', label: 'Hour' },
  { id: 'day', label: 'Day' },
  { id: 'week', label: 'Week' },
  { id: 'month', label: 'Month' },
] as const
type BucketId = (typeof BUCKETS)[number]['id']

/** The top lists: what spend/by groups the window's requests by. */
const TOPS = [
  { title: 'Top models', groupBy: 'model' },
  { title: 'Top users', groupBy: 'user' },
] as const

const pointsOf = (rows: Rows, measure: string): SeriesPoint[] =>
  rows.map((row) => ({ time: String(row.time), value: typeof row[measure] === 'number' ? (row[measure] as number) : null }))

/** The window's metrics body, in the caller's own time zone. */
const windowBody = (windowId: WindowId, bucket: BucketId) => ({ filter: 'all', ...timeWindow(windowId), dbIncrement: bucket })

/** The window at a glance: its totals, each measure over time, and where the traffic and spend go. */
export function Overview() {
  const [windowId, setWindowId] = useState<WindowId>('24h')
  const [bucket, setBucket] = useState<BucketId>('hour')
  const [figures, setFigures] = useState<Figures>()
  const [series, setSeries] = useState<SeriesPoint[][]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    const body = windowBody(windowId, bucket)
    const metric = <T,>(name: string) => api<T>('POST', `/v1/metrics/${name}`, body)
    setError(undefined)
    Promise.all([
      metric<Scalar<'count'>>('totalRequests'),
      metric<Scalar<'cost'>>('totalCost'),
      metric<Scalar<'latencyMs', number | null>>('averageLatency'),
      metric<Scalar<'timeToFirstTokenMs', number | null>>('averageTimeToFirstToken'),
      metric<Array<Scalar<'count'>>>('errorBreakdown'),
      metric<typeof CacheSavingsResult.static>('cacheSavings'),
    ])
      .then(([requests, cost, latency, firstToken, breakdown, cache]) =>
        setFigures({
          requests: requests.count,
          cost: cost.cost,
          latencyMs: latency.latencyMs,
          timeToFirstTokenMs: firstToken.timeToFirstTokenMs,
          errors: breakdown.reduce((sum, row) => sum + row.count, 0),
          cacheHits: cache.responseCacheHits,
          cacheSavings: cache.responseCacheSavings,
        }),
      )
      .catch((failure: Error) => setError(failure.message))
    Promise.all(CHARTS.map((chart) => metric<Rows>(chart.metric)))
      .then((answers) => setSeries(answers.map((rows, i) => pointsOf(rows, CHARTS[i]?.measure ?? ''))))
      .catch((failure: Error) => {
        setSeries(undefined)
        setError(failure.message)
      })
  }, [windowId, bucket])
  const chooseWindow = (id: WindowId) => {
    setWindowId(id)
    setBucket(windowOf(id).bucket)
  }
  return (
    <section class="overview" aria-labelledby="overview">
      <h1 id="overview">Overview</h1>
      <WindowBar value={windowId} onChange={chooseWindow}>
        <label>
          Bucket
          <select value={bucket} onChange={(event) => setBucket((event.currentTarget as HTMLSelectElement).value as BucketId)}>
            {BUCKETS.map((b) => (
              <option key={b.id} value={b.id}>
                {b.label}
              </option>
            ))}
          </select>
        </label>
      </WindowBar>
      <ErrorNote error={error} />
      {!figures && !error && <p class="muted">Loading…</p>}
      {figures && (
        <div class="cards">
          <Card label="Requests" value={formatCount(figures.requests)} />
          <Card label="Cost" value={formatUsd(figures.cost)} />
          <Card label="Errors" value={formatCount(figures.errors)} />
          <Card label="Average latency" value={formatMs(figures.latencyMs)} />
          <Card label="Time to first token" value={formatMs(figures.timeToFirstTokenMs)} />
          <Card
            label="Cache hit rate"
            value={figures.requests === 0 ? '-' : percent.format(figures.cacheHits / figures.requests)}
            note={`${formatCount(figures.cacheHits)} ${figures.cacheHits === 1 ? 'hit' : 'hits'}, ${formatUsd(figures.cacheSavings)} saved`}
          />
        </div>
      )}
      {series && (
        <div class="charts">
          {CHARTS.map((chart, i) => (
            <Chart
              key={chart.title}
              title={chart.title}
              points={series[i] ?? []}
              format={chart.format}
              axisFormat={chart.axisFormat}
              whole={chart.whole}
            />
          ))}
        </div>
      )}
      <div class="tops">
        {TOPS.map((top) => (
          <TopList key={top.groupBy} title={top.title} windowId={windowId} bucket={bucket} groupBy={top.groupBy} />
        ))}
        <TopProperties windowId={windowId} bucket={bucket} />
      </div>
    </section>
  )
}

function Card({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div class="card">
      <div class="label">{label}</div>
      <div class="value" data-figure={label}>
        {value}
      </div>
      {note && (
        <div class="note" data-figure-note={label}>
          {note}
        </div>
      )}
    </div>
  )
}

/** One ranking, loaded on its own: a tier that lacks a view (users) shows why, and the rest still loads. */
function TopList({ title, windowId, bucket, groupBy }: { title: string; windowId: WindowId; bucket: BucketId; groupBy: string }) {
  const [groups, setGroups] = useState<Group[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    setError(undefined)
    api<Group[]>('POST', '/v1/spend/by', { ...windowBody(windowId, bucket), groupBy, limit: 5 })
      .then(setGroups)
      .catch((failure: Error) => setError(failure.message))
  }, [windowId, bucket, groupBy])
  return <Ranking title={title} groups={groups} error={error} noKey="(none)" />
}

/** The costliest property values of the window, as `name = value`, across its first few property names. */
function TopProperties({ windowId, bucket }: { windowId: WindowId; bucket: BucketId }) {
  const [groups, setGroups] = useState<Group[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    const body = windowBody(windowId, bucket)
    setError(undefined)
    api<typeof PropertyKeys.static>('POST', '/v1/property/query', { ...body, limit: 5 })
      .then((names) =>
        Promise.all(
          names.map(async (name) => {
            const values = await api<Group[]>('POST', '/v1/spend/by', { ...body, groupBy: `property:${name}`, limit: 5 })
            return values.filter((value) => value.key !== null).map((value) => ({ ...value, key: `${name} = ${value.key}` }))
          }),
        ),
      )
      .then((perName) =>
        setGroups(
          perName
            .flat()
            .sort((a, b) => b.cost - a.cost || b.requests - a.requests)
            .slice(0, 5),
        ),
      )
      .catch((failure: Error) => setError(failure.message))
  }, [windowId, bucket])
  return <Ranking title="Top properties" groups={groups} error={error} noKey="(none)" />
}

function Ranking({ title, groups, error, noKey }: { title: string; groups?: Group[]; error?: string; noKey: string }) {
  return (
    <figure class="top" aria-label={title}>
      <figcaption>{title}</figcaption>
      <ErrorNote error={error} />
      {!groups && !error && <p class="muted">Loading…</p>}
      {groups && groups.length === 0 && <p class="muted">Nothing in this window.</p>}
      {groups && groups.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((group) => (
              <tr key={group.key ?? ''}>
                <td>{group.key ?? noKey}</td>
                <td>{formatCount(group.requests)}</td>
                <td>{formatUsd(group.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  )
}
