import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { formatCount, formatMs, formatUsd } from './format'

interface Figures {
  requests: number
  cost: number
  errors: number
  latencyMs: number | null
}

/** The last 24 hours at a glance; the time window and the charts come next. */
export function Overview() {
  const [figures, setFigures] = useState<Figures>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    const window = { filter: 'all', timeZoneDifference: -new Date().getTimezoneOffset() }
    const metric = <T,>(name: string) => api<T>('POST', `/v1/metrics/${name}`, window)
    Promise.all([
      metric<{ count: number }>('totalRequests'),
      metric<{ cost: number }>('totalCost'),
      metric<{ latencyMs: number | null }>('averageLatency'),
      metric<Array<{ count: number }>>('errorBreakdown'),
    ])
      .then(([requests, cost, latency, breakdown]) =>
        setFigures({
          requests: requests.count,
          cost: cost.cost,
          latencyMs: latency.latencyMs,
          errors: breakdown.reduce((sum, row) => sum + row.count, 0),
        }),
      )
      .catch((failure: Error) => setError(failure.message))
  }, [])
  return (
    <section aria-labelledby="overview">
      <h1 id="overview">Overview</h1>
      <p class="muted">The last 24 hours</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!figures && !error && <p class="muted">Loading…</p>}
      {figures && (
        <div class="cards">
          <Card label="Requests" value={formatCount(figures.requests)} />
          <Card label="Cost" value={formatUsd(figures.cost)} />
          <Card label="Errors" value={formatCount(figures.errors)} />
          <Card label="Average latency" value={formatMs(figures.latencyMs)} />
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
