import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { Chart, type SeriesPoint } from './chart'
import { formatCount, formatMs, formatUsd } from './format'
import { ErrorNote } from './ui'

interface Figures {
  requests: number
  cost: number
  errors: number
  latencyMs: number | null
}

interface Series {
  requests: SeriesPoint[]
  cost: SeriesPoint[]
  errors: SeriesPoint[]
  latency: SeriesPoint[]
}

const WINDOWS = [
  { id: '24h', label: 'Last 24 hours', hours: 24, bucket: 'hour' },
  { id: '7d', label: 'Last 7 days', hours: 24 * 7, bucket: 'day' },
  { id: '30d', label: 'Last 30 days', hours: 24 * 30, bucket: 'day' },
] as const
type WindowId = (typeof WINDOWS)[number]['id']

const pointsOf = (rows: Array<Record<string, unknown>>, measure: string): SeriesPoint[] =>
  rows.map((row) => ({ time: String(row.time), value: typeof row[measure] === 'number' ? (row[measure] as number) : null }))

/** The window at a glance: its totals, and each measure over time in the caller's own time zone. */
export function Overview() {
  const [windowId, setWindowId] = useState<WindowId>('24h')
  const [figures, setFigures] = useState<Figures>()
  const [series, setSeries] = useState<Series>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    const chosen = WINDOWS.find((w) => w.id === windowId) ?? WINDOWS[0]
    const end = new Date()
    const body = {
      filter: 'all',
      timeFilter: { start: new Date(end.getTime() - chosen.hours * 3_600_000).toISOString(), end: end.toISOString() },
      timeZoneDifference: -end.getTimezoneOffset(),
      dbIncrement: chosen.bucket,
    }
    const metric = <T,>(name: string) => api<T>('POST', `/v1/metrics/${name}`, body)
    type Rows = Array<Record<string, unknown>>
    setError(undefined)
    Promise.all([
      metric<{ count: number }>('totalRequests'),
      metric<{ cost: number }>('totalCost'),
      metric<{ latencyMs: number | null }>('averageLatency'),
      metric<Array<{ count: number }>>('errorBreakdown'),
      metric<Rows>('requestOverTime'),
      metric<Rows>('costOverTime'),
      metric<Rows>('errorOverTime'),
      metric<Rows>('latencyOverTime'),
    ])
      .then(([requests, cost, latency, breakdown, requestRows, costRows, errorRows, latencyRows]) => {
        setFigures({
          requests: requests.count,
          cost: cost.cost,
          latencyMs: latency.latencyMs,
          errors: breakdown.reduce((sum, row) => sum + row.count, 0),
        })
        setSeries({
          requests: pointsOf(requestRows, 'count'),
          cost: pointsOf(costRows, 'cost'),
          errors: pointsOf(errorRows, 'errors'),
          latency: pointsOf(latencyRows, 'latencyMs'),
        })
      })
      .catch((failure: Error) => setError(failure.message))
  }, [windowId])
  return (
    <section aria-labelledby="overview">
      <h1 id="overview">Overview</h1>
      <label class="window">
        Window
        <select value={windowId} onChange={(event) => setWindowId((event.currentTarget as HTMLSelectElement).value as WindowId)}>
          {WINDOWS.map((w) => (
            <option key={w.id} value={w.id}>
              {w.label}
            </option>
          ))}
        </select>
      </label>
      <ErrorNote error={error} />
      {!figures && !error && <p class="muted">Loading…</p>}
      {figures && (
        <div class="cards">
          <Card label="Requests" value={formatCount(figures.requests)} />
          <Card label="Cost" value={formatUsd(figures.cost)} />
          <Card label="Errors" value={formatCount(figures.errors)} />
          <Card label="Average latency" value={formatMs(figures.latencyMs)} />
        </div>
      )}
      {series && (
        <div class="charts">
          <Chart title="Requests" points={series.requests} format={formatCount} whole />
          <Chart title="Cost" points={series.cost} format={formatUsd} />
          <Chart title="Errors" points={series.errors} format={formatCount} whole />
          <Chart title="Latency" points={series.latency} format={formatMs} />
        </div>
      )}
    </section>
  )
}

function Card({ label, value }: { label: string; value: string }) {
  return (
    <div class="card">
      <div class="label">{label}</div>
      <div class="value" data-figure={label}>
        {value}
      </div>
    </div>
  )
}
