import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { formatCount, formatMs, formatUsd } from './format'
import { ErrorNote } from './ui'

interface RequestView {
  id: string
  createdAt: string
  provider: string
  model: string
  path: string
  status: 'success' | 'error'
  httpStatus: number
  gatewayMode: string | null
  translationWarning: string | null
  userId: string | null
  properties: Record<string, string>
  latencyMs: number | null
  tokens: { prompt: number | null; completion: number | null; total: number | null }
  cost: number | null
  costNote: string | null
  error: string | null
  body?: { request: string; response: string | null; truncated: boolean }
}

interface Page {
  requests: RequestView[]
  nextCursor: string | null
}

const PAGE_SIZE = 50

/** A model typed in narrows the list to it; empty, every request. */
const filterFor = (model: string) => (model === '' ? 'all' : { request: { model: { equals: model } } })

/** The request log, newest first, a page at a time; a request opens into its detail. */
export function Requests({ canAnnotate }: { canAnnotate: boolean }) {
  const [model, setModel] = useState('')
  const [pages, setPages] = useState<Page[]>([])
  const [open, setOpen] = useState<RequestView>()
  const [error, setError] = useState<string>()
  const [loading, setLoading] = useState(true)

  const load = async (cursor?: string) => {
    setLoading(true)
    setError(undefined)
    try {
      const page = await api<Page>('POST', '/v1/request/query', {
        filter: filterFor(model),
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      })
      setPages((loaded) => (cursor ? [...loaded, page] : [page]))
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setLoading(false)
    }
  }
  useEffect(() => {
    load()
  }, [model])

  const rows = pages.flatMap((page) => page.requests)
  const next = pages.at(-1)?.nextCursor
  if (open) return <RequestDetail request={open} canAnnotate={canAnnotate} onBack={() => setOpen(undefined)} />
  return (
    <section aria-labelledby="requests">
      <h1 id="requests">Requests</h1>
      <form
        class="inline"
        aria-label="Filter"
        onSubmit={(event) => {
          event.preventDefault()
          setModel(String(new FormData(event.currentTarget as HTMLFormElement).get('model') ?? '').trim())
        }}
      >
        <label>
          Model
          <input name="model" placeholder="every model" defaultValue={model} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={error} />
      {loading && rows.length === 0 && <p class="muted">Loading…</p>}
      {!loading && rows.length === 0 && !error && <p class="muted">No requests match.</p>}
      {rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">Latency</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((request) => (
              <tr key={request.id}>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(request)}>
                    {new Date(request.createdAt).toLocaleString()}
                  </button>
                </td>
                <td>{request.model}</td>
                <td>
                  {request.status} ({request.httpStatus})
                </td>
                <td>{formatMs(request.latencyMs)}</td>
                <td>{request.tokens.total === null ? '-' : formatCount(request.tokens.total)}</td>
                <td data-cost>{request.cost === null ? '-' : formatUsd(request.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" class="quiet" disabled={loading} onClick={() => load(next)}>
          More
        </button>
      )}
    </section>
  )
}

function RequestDetail({ request, canAnnotate, onBack }: { request: RequestView; canAnnotate: boolean; onBack(): void }) {
  const [bodies, setBodies] = useState<RequestView['body']>()
  const [rated, setRated] = useState<string>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    api<{ requests: RequestView[] }>('POST', '/v1/request/query-ids', { requestIds: [request.id], includeBodies: true })
      .then((found) => setBodies(found.requests[0]?.body))
      .catch((failure: Error) => setError(failure.message))
  }, [request.id])
  const rate = async (rating: boolean) => {
    setError(undefined)
    try {
      await api('POST', `/v1/request/${encodeURIComponent(request.id)}/feedback`, { rating })
      setRated(rating ? 'Rated good' : 'Rated bad')
    } catch (failure) {
      setError((failure as Error).message)
    }
  }
  const facts: Array<[string, string]> = [
    ['Request id', request.id],
    ['Time', new Date(request.createdAt).toLocaleString()],
    ['Provider', request.provider],
    ['Model', request.model],
    ['Path', request.path],
    ['Mode', request.gatewayMode ?? '-'],
    ['Status', `${request.status} (${request.httpStatus})`],
    ['Latency', formatMs(request.latencyMs)],
    ['Tokens', `${request.tokens.prompt ?? '-'} in, ${request.tokens.completion ?? '-'} out`],
    ['Cost', request.cost === null ? `- (${request.costNote ?? 'unknown'})` : formatUsd(request.cost)],
    ['User', request.userId ?? '-'],
    [
      'Properties',
      Object.entries(request.properties)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ') || '-',
    ],
  ]
  if (request.translationWarning) facts.push(['Translation', request.translationWarning])
  if (request.error) facts.push(['Error', request.error])
  return (
    <section aria-labelledby="request">
      <button type="button" class="quiet" onClick={onBack}>
        ← Requests
      </button>
      <h1 id="request">Request</h1>
      <ErrorNote error={error} />
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {canAnnotate && (
        <fieldset class="actions">
          <legend>Feedback</legend>
          <button type="button" class="quiet" onClick={() => rate(true)}>
            Good answer
          </button>
          <button type="button" class="quiet" onClick={() => rate(false)}>
            Bad answer
          </button>
          {rated && <span role="status">{rated}</span>}
        </fieldset>
      )}
      <h2>Bodies</h2>
      {bodies ? (
        <div class="bodies">
          <figure>
            <figcaption>Request body</figcaption>
            <pre>{bodies.request}</pre>
          </figure>
          <figure>
            <figcaption>Response body</figcaption>
            <pre>{bodies.response ?? '(none)'}</pre>
          </figure>
          {bodies.truncated && <p class="muted">Cut at 64 KiB.</p>}
        </div>
      ) : (
        <p class="muted">Not stored (the organization's body retention), or not yet written.</p>
      )}
    </section>
  )
}
