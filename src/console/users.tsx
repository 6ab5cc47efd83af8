import { useEffect, useState } from 'preact/hooks'
import type { UsersOverview } from '../modules/analytics/model'
import { api } from './api'
import { formatCount, formatMs, formatUsd, formatWhen } from './format'
import { groupedBody, Pager, useGroupPage } from './sessions'
import { WindowBar } from './time-window'
import { ErrorNote, type PageProps } from './ui'

type Overview = typeof UsersOverview.static

const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 })

/**
 * Users (the Gw-User-Id of calls), the costliest first, under the figures of the window. The Users
 * feature needs the Growth tier: below it both reads answer 403, and the API's message is what shows.
 */
export function Users(_: PageProps) {
  const [overview, setOverview] = useState<Overview>()
  const [overviewError, setOverviewError] = useState<string>()
  const { rows, hasNext, error, page, setPage, windowId, chooseWindow } = useGroupPage('/v1/user/query')
  useEffect(() => {
    setOverviewError(undefined)
    api<Overview>('POST', '/v1/user/metrics-overview/query', groupedBody(windowId))
      .then(setOverview)
      .catch((failure: Error) => setOverviewError(failure.message))
  }, [windowId])
  return (
    <section class="traffic" aria-labelledby="users">
      <h1 id="users">Users</h1>
      <p class="muted">Calls that carried a Gw-User-Id header.</p>
      <WindowBar value={windowId} onChange={chooseWindow} />
      {/* Both reads fail alike below the tier: the message is said once. */}
      <ErrorNote error={overviewError ?? error} />
      {overview && (
        <div class="cards">
          <Card label="Users" value={formatCount(overview.users)} />
          <Card
            label="Requests per user"
            value={overview.requestsPerUser === null ? '-' : decimal.format(overview.requestsPerUser)}
          />
          <Card label="Cost per user" value={overview.costPerUser === null ? '-' : formatUsd(overview.costPerUser)} />
        </div>
      )}
      {!rows && !error && <p class="muted">Loading…</p>}
      {rows && rows.length === 0 && <p class="muted">No users in this window.</p>}
      {rows && rows.length > 0 && (
        <table aria-label="Users">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
              <th scope="col">Tokens</th>
              <th scope="col">Errors</th>
              <th scope="col">Average latency</th>
              <th scope="col">Last seen</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((user) => (
              <tr key={user.key ?? ''}>
                <td>{user.key ?? <span class="muted">(none)</span>}</td>
                <td>{formatCount(user.requests)}</td>
                <td>{formatUsd(user.cost)}</td>
                <td>{formatCount(user.tokens)}</td>
                <td>{formatCount(user.errors)}</td>
                <td>{formatMs(user.averageLatencyMs)}</td>
                <td>{formatWhen(user.lastAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Users pages" page={page} hasNext={hasNext} onPage={setPage} />
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
