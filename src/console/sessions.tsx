import { useEffect, useState } from 'preact/hooks'
import type { Group as GroupView } from '../modules/analytics/model'
import type { SessionAnnotations as Annotations, Page, SessionRating, SessionTags } from '../modules/traffic/model'
import { api } from './api'
import { formatCount, formatMs, formatUsd, formatWhen } from './format'
import { RequestDetail, type RequestView } from './request-detail'
import { timeWindow, WindowBar, type WindowId } from './time-window'
import { ErrorNote, type PageProps, useAction } from './ui'

/** One group of a grouped traffic view (a session, a user, a property's value); cost in USD. */
export type Group = typeof GroupView.static

export const PAGE_SIZE = 25
/** The window the grouped traffic views open on. */
export const TRAFFIC_WINDOW: WindowId = '30d'

/** A grouped view's body: every request of the window. */
export const groupedBody = (windowId: WindowId) => ({ filter: 'all', ...timeWindow(windowId) })

/**
 * A grouped view a page at a time, over the window chosen (another window starts at its first page).
 * The API answers no total, so one row more than a page is asked for, and its presence says whether a
 * next page exists.
 */
export function useGroupPage(path: string) {
  const [windowId, setWindowId] = useState(TRAFFIC_WINDOW)
  const [page, setPage] = useState(0)
  const [rows, setRows] = useState<Group[]>()
  const [hasNext, setHasNext] = useState(false)
  const [error, setError] = useState<string>()
  useEffect(() => {
    setError(undefined)
    setRows(undefined)
    api<Group[]>('POST', path, { ...groupedBody(windowId), limit: PAGE_SIZE + 1, offset: page * PAGE_SIZE })
      .then((answer) => {
        setRows(answer.slice(0, PAGE_SIZE))
        setHasNext(answer.length > PAGE_SIZE)
      })
      .catch((failure: Error) => setError(failure.message))
  }, [path, page, windowId])
  const chooseWindow = (id: WindowId) => {
    setWindowId(id)
    setPage(0)
  }
  return { rows, hasNext, error, page, setPage, windowId, chooseWindow }
}

export function Pager({
  label,
  page,
  hasNext,
  onPage,
}: {
  label: string
  page: number
  hasNext: boolean
  onPage(page: number): void
}) {
  if (page === 0 && !hasNext) return null
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="quiet" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span class="muted">Page {page + 1}</span>
      <button type="button" class="quiet" disabled={!hasNext} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  )
}

/** Sessions (the Gw-Session-Id of calls), the most recent first; one opens into its requests. */
export function Sessions({ can }: PageProps) {
  const [open, setOpen] = useState<Group>()
  const { rows, hasNext, error, page, setPage, windowId, chooseWindow } = useGroupPage('/v1/session/query')
  if (open?.key) return <SessionDetail session={open} sessionId={open.key} can={can} onBack={() => setOpen(undefined)} />
  return (
    <section class="traffic" aria-labelledby="sessions">
      <h1 id="sessions">Sessions</h1>
      <p class="muted">Calls that carried a Gw-Session-Id header.</p>
      <WindowBar value={windowId} onChange={chooseWindow} />
      <ErrorNote error={error} />
      {!rows && !error && <p class="muted">Loading…</p>}
      {rows && rows.length === 0 && <p class="muted">No sessions in this window.</p>}
      {rows && rows.length > 0 && (
        <table aria-label="Sessions">
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
              <th scope="col">Tokens</th>
              <th scope="col">Errors</th>
              <th scope="col">Average latency</th>
              <th scope="col">Started</th>
              <th scope="col">Last request</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((session) => (
              <tr key={session.key ?? ''}>
                <td>
                  {session.key === null ? (
                    <span class="muted">(none)</span>
                  ) : (
                    <button
                      type="button"
                      class="link"
                      aria-label={`Open session ${session.key}`}
                      onClick={() => setOpen(session)}
                    >
                      {session.key}
                    </button>
                  )}
                </td>
                <td data-requests>{formatCount(session.requests)}</td>
                <td>{formatUsd(session.cost)}</td>
                <td>{formatCount(session.tokens)}</td>
                <td>{formatCount(session.errors)}</td>
                <td>{formatMs(session.averageLatencyMs)}</td>
                <td>{formatWhen(session.firstAt)}</td>
                <td>{formatWhen(session.lastAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Sessions pages" page={page} hasNext={hasNext} onPage={setPage} />
    </section>
  )
}

/** One session: its figures, its rating and tags for those who may annotate, and its requests in order. */
function SessionDetail({
  session,
  sessionId,
  can,
  onBack,
}: {
  session: Group
  sessionId: string
  can: PageProps['can']
  onBack(): void
}) {
  const [requests, setRequests] = useState<RequestView[]>()
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<string>()
  const [request, setRequest] = useState<RequestView>()
  // A conversation reads in the order it happened; the cursor continues it page after page.
  const load = (after: string | null) =>
    api<typeof Page.static>('POST', '/v1/request/query', {
      filter: { request: { session_id: { equals: sessionId } } },
      sort: { created_at: 'asc' },
      limit: 100,
      ...(after ? { cursor: after } : {}),
    })
      .then((answer) => {
        setRequests((shown) => [...(after ? (shown ?? []) : []), ...answer.requests])
        setCursor(answer.nextCursor)
      })
      .catch((failure: Error) => setError(failure.message))
  useEffect(() => {
    load(null)
  }, [sessionId])

  if (request) return <RequestDetail request={request} can={can} back="Session" onBack={() => setRequest(undefined)} />
  return (
    <section class="traffic" aria-labelledby="session">
      <button type="button" class="link back" onClick={onBack}>
        ← All sessions
      </button>
      <h1 id="session">
        Session <code>{sessionId}</code>
      </h1>
      <dl class="facts">
        <div>
          <dt>Requests</dt>
          <dd>{formatCount(session.requests)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatUsd(session.cost)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatCount(session.tokens)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatWhen(session.firstAt)}</dd>
        </div>
        <div>
          <dt>Last request</dt>
          <dd>{formatWhen(session.lastAt)}</dd>
        </div>
      </dl>
      <SessionAnnotations sessionId={sessionId} canAnnotate={can('traffic.annotate')} />
      <h2>Requests</h2>
      <ErrorNote error={error} />
      {!requests && !error && <p class="muted">Loading…</p>}
      {requests && requests.length === 0 && <p class="muted">No requests of this session are in the log.</p>}
      {requests && requests.length > 0 && (
        <table aria-label="Requests of the session">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">User</th>
              <th scope="col">Latency</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((r) => (
              <tr key={r.id}>
                <td>
                  <button type="button" class="link" aria-label={`Open request ${r.id}`} onClick={() => setRequest(r)}>
                    {formatWhen(r.createdAt)}
                  </button>
                </td>
                <td>{r.model}</td>
                <td class={r.status === 'error' ? 'error' : undefined}>
                  {r.status} ({r.httpStatus})
                </td>
                <td>{r.userId ?? '-'}</td>
                <td>{formatMs(r.latencyMs)}</td>
                <td>{r.tokens.total === null ? '-' : formatCount(r.tokens.total)}</td>
                <td>{r.cost === null ? '-' : formatUsd(r.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <div class="actions">
          <button type="button" class="quiet" onClick={() => load(cursor)}>
            More requests
          </button>
        </div>
      )}
    </section>
  )
}

/** What was said of a session, its rating and tags; those who hold traffic.annotate rate and tag it. */
function SessionAnnotations({ sessionId, canAnnotate }: { sessionId: string; canAnnotate: boolean }) {
  const [rating, setRating] = useState<number | null>()
  const [tags, setTags] = useState<string[]>()
  const { error, setError, run } = useAction()
  const path = `/v1/session/${encodeURIComponent(sessionId)}`
  useEffect(() => {
    api<typeof Annotations.static>('GET', `${path}/annotations`)
      .then((said) => {
        setRating(said.rating)
        setTags(said.tags)
      })
      .catch((failure: Error) => setError(failure.message))
  }, [path])
  const rate = (good: boolean) =>
    run(async () => {
      const answer = await api<typeof SessionRating.static>('POST', `${path}/feedback`, { rating: good })
      setRating(answer.rating)
    })
  const tag = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const value = String(new FormData(form).get('tag') ?? '').trim()
    if (!value) return
    const tagged = await run(async () => {
      const answer = await api<typeof SessionTags.static>('POST', `${path}/tag`, { tag: value })
      setTags(answer.tags)
    })
    if (tagged) form.reset()
  }
  return (
    <div class="card annotate">
      <div class="annotate-row">
        {canAnnotate && (
          <fieldset>
            <legend>Rating</legend>
            <button type="button" class="quiet" aria-pressed={rating === 1} onClick={() => rate(true)}>
              Good
            </button>
            <button type="button" class="quiet" aria-pressed={rating === 0} onClick={() => rate(false)}>
              Bad
            </button>
          </fieldset>
        )}
        {rating !== undefined && (
          <span role="status" class="muted">
            {rating === null ? 'Not rated.' : `Rated ${rating === 1 ? 'good' : rating === 0 ? 'bad' : rating}.`}
          </span>
        )}
      </div>
      {canAnnotate && (
        <form class="inline" onSubmit={tag} aria-label="Tag the session">
          <label>
            Tag
            <input name="tag" required maxLength={100} />
          </label>
          <button type="submit">Add tag</button>
        </form>
      )}
      {tags && tags.length > 0 && (
        <div class="annotate-row">
          <span class="muted" id="session-tags">
            Tags
          </span>
          <ul class="tags" aria-labelledby="session-tags">
            {tags.map((t) => (
              <li key={t}>{t}</li>
            ))}
          </ul>
        </div>
      )}
      <ErrorNote error={error} />
    </div>
  )
}
