import { useEffect, useState } from 'preact/hooks'
import type { SavedFilter } from '../modules/saved-views/model'
import type { Page as PageView, QueryInput } from '../modules/traffic/model'
import { csvRow } from '../util/csv'
import { api } from './api'
import { FilterBuilder } from './filter-builder'
import { emptyTree, fromApiFilter, type Group, toApiFilter } from './filter-tree'
import { formatCount, formatMs, formatUsd } from './format'
import { RequestDetail, type RequestView } from './request-detail'
import { ErrorNote, type PageProps, saveFile, useList } from './ui'

type Page = typeof PageView.static
type SavedView = typeof SavedFilter.static
type SortField = keyof NonNullable<QueryInput['sort']>
interface Sort {
  field: SortField
  direction: 'asc' | 'desc'
}

const PAGE_SIZE = 50
/** The export reads the log a page of the API's largest size at a time, and stops here: a browser tab holds it all. */
const EXPORT_PAGE = 1_000
const EXPORT_LIMIT = 100_000

const NEWEST_FIRST: Sort = { field: 'created_at', direction: 'desc' }

/** The sortable columns, by the field the API sorts on. */
const COLUMNS: Array<{ title: string; field?: SortField }> = [
  { title: 'Time', field: 'created_at' },
  { title: 'Model' },
  { title: 'Status' },
  { title: 'Latency', field: 'latency_ms' },
  { title: 'Tokens', field: 'total_tokens' },
  { title: 'Cost', field: 'cost' },
]

const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'provider',
  'model',
  'path',
  'status',
  'http_status',
  'latency_ms',
  'time_to_first_token_ms',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'user_id',
  'session_id',
  'properties',
  'error',
]

const exportRow = (r: RequestView) =>
  csvRow([
    r.id,
    r.createdAt,
    r.provider,
    r.model,
    r.path,
    r.status,
    r.httpStatus,
    r.latencyMs,
    r.timeToFirstTokenMs,
    r.tokens.prompt,
    r.tokens.completion,
    r.tokens.total,
    r.cost,
    r.userId,
    r.sessionId,
    Object.keys(r.properties).length > 0 ? JSON.stringify(r.properties) : null,
    r.error,
  ])

/** The request log: filtered by a tree of conditions or a saved view, sorted by a column, paged, exported. */
export function Requests({ can }: PageProps) {
  const [tree, setTree] = useState<Group>(emptyTree())
  const [filter, setFilter] = useState<unknown>('all')
  const [applied, setApplied] = useState(0)
  const [sort, setSort] = useState<Sort>(NEWEST_FIRST)
  const [pages, setPages] = useState<Page[]>([])
  const [open, setOpen] = useState<RequestView>()
  const [error, setError] = useState<string>()
  const [loading, setLoading] = useState(true)
  const [exporting, setExporting] = useState<string>()
  const views = useList<SavedView>('/v1/filter')

  const query = (extra: Record<string, unknown>) =>
    api<Page>('POST', '/v1/request/query', { filter, sort: { [sort.field]: sort.direction }, ...extra })

  /** The next page after `loaded`: by cursor when sorted by time (rows written meanwhile shift nothing), else by offset. */
  const load = async (loaded: Page[] = []) => {
    setLoading(true)
    setError(undefined)
    try {
      const last = loaded.at(-1)
      const position =
        sort.field === 'created_at'
          ? last?.nextCursor
            ? { cursor: last.nextCursor }
            : {}
          : { offset: loaded.reduce((sum, page) => sum + page.requests.length, 0) }
      const page = await query({ limit: PAGE_SIZE, ...position })
      setPages([...loaded, page])
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setLoading(false)
    }
  }
  useEffect(() => {
    load()
  }, [JSON.stringify(filter), sort.field, sort.direction, applied])

  const sortBy = (field: SortField) =>
    setSort((current) =>
      current.field === field
        ? { field, direction: current.direction === 'desc' ? 'asc' : 'desc' }
        : { field, direction: 'desc' },
    )

  const applyView = (id: string) => {
    const view = views.items?.find((candidate) => candidate.id === id)
    if (!view) return
    const shown = fromApiFilter(view.filter)
    if (!shown) {
      setError(`the view ${view.name} uses a filter this form cannot show; it is applied as saved`)
      setTree(emptyTree())
    } else setTree(shown)
    setFilter(view.filter)
  }
  const saveView = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const name = String(new FormData(form).get('view') ?? '').trim()
    if (await views.change(() => api('POST', '/v1/filter', { name, filter: toApiFilter(tree) }))) form.reset()
  }
  const deleteView = (view: SavedView) => views.change(() => api('DELETE', `/v1/filter/${encodeURIComponent(view.id)}`))

  // Every page of the filter, newest first, by cursor: rows written during the export neither repeat nor shift it.
  const exportCsv = async () => {
    setError(undefined)
    const lines = [csvRow(EXPORT_COLUMNS)]
    let cursor: string | null | undefined
    let rows = 0
    try {
      do {
        const page = await api<Page>('POST', '/v1/request/query', {
          filter,
          limit: EXPORT_PAGE,
          sort: { created_at: 'desc' },
          ...(cursor ? { cursor } : {}),
        })
        for (const request of page.requests) lines.push(exportRow(request))
        rows += page.requests.length
        cursor = page.nextCursor
        setExporting(`Exporting… ${formatCount(rows)} rows`)
      } while (cursor && rows < EXPORT_LIMIT)
      saveFile(`requests-${new Date().toISOString().slice(0, 19).replaceAll(':', '')}.csv`, new Blob(lines, { type: 'text/csv' }))
      setExporting(
        cursor
          ? `Exported the newest ${formatCount(rows)} rows; narrow the filter for the rest`
          : `Exported ${formatCount(rows)} rows`,
      )
    } catch (failure) {
      setExporting(undefined)
      setError((failure as Error).message)
    }
  }

  const rows = pages.flatMap((page) => page.requests)
  const more = sort.field === 'created_at' ? pages.at(-1)?.nextCursor : pages.at(-1)?.requests.length === PAGE_SIZE
  if (open) return <RequestDetail request={open} can={can} back="Requests" onBack={() => setOpen(undefined)} />
  return (
    <section aria-labelledby="requests">
      <h1 id="requests">Requests</h1>
      <form
        aria-label="Filter"
        onSubmit={(event) => {
          event.preventDefault()
          setFilter(toApiFilter(tree))
          // Applying the same filter again reads the log again: new calls appear.
          setApplied((count) => count + 1)
        }}
      >
        <FilterBuilder tree={tree} onChange={setTree} />
        <div class="actions">
          <button type="submit">Apply filter</button>
          <button
            type="button"
            class="quiet"
            onClick={() => {
              setTree(emptyTree())
              setFilter('all')
            }}
          >
            Clear
          </button>
          <button type="button" class="quiet" onClick={exportCsv}>
            Export CSV
          </button>
          {exporting && <span role="status">{exporting}</span>}
        </div>
      </form>
      <div class="toolbar views">
        <label>
          Saved view
          <select value="" onChange={(event) => applyView((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">{views.items && views.items.length === 0 ? 'none saved' : 'choose…'}</option>
            {views.items?.map((view) => (
              <option key={view.id} value={view.id}>
                {view.name}
              </option>
            ))}
          </select>
        </label>
        {can('org.settings.write') && (
          <form class="inline" aria-label="Save view" onSubmit={saveView}>
            <label>
              Save the filter as
              <input name="view" required maxLength={200} placeholder="view name" />
            </label>
            <button type="submit" class="quiet">
              Save view
            </button>
          </form>
        )}
        {can('org.settings.write') &&
          views.items?.map((view) => (
            <button
              key={view.id}
              type="button"
              class="quiet"
              aria-label={`Delete view ${view.name}`}
              onClick={() => deleteView(view)}
            >
              ✕ {view.name}
            </button>
          ))}
      </div>
      <ErrorNote error={error ?? views.error} />
      {loading && rows.length === 0 && <p class="muted">Loading…</p>}
      {!loading && rows.length === 0 && !error && <p class="muted">No requests match.</p>}
      {rows.length > 0 && (
        <table>
          <thead>
            <tr>
              {COLUMNS.map((column) => {
                const sorted = column.field === sort.field
                return (
                  <th
                    key={column.title}
                    scope="col"
                    aria-sort={sorted ? (sort.direction === 'desc' ? 'descending' : 'ascending') : undefined}
                  >
                    {column.field ? (
                      <button type="button" class="link sort" onClick={() => sortBy(column.field as SortField)}>
                        {column.title}
                        {sorted ? (sort.direction === 'desc' ? ' ↓' : ' ↑') : ''}
                      </button>
                    ) : (
                      column.title
                    )}
                  </th>
                )
              })}
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
                <td data-latency>{formatMs(request.latencyMs)}</td>
                <td>{request.tokens.total === null ? '-' : formatCount(request.tokens.total)}</td>
                <td data-cost>{request.cost === null ? '-' : formatUsd(request.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {more && (
        <button type="button" class="quiet" disabled={loading} onClick={() => load(pages)}>
          More
        </button>
      )}
    </section>
  )
}
