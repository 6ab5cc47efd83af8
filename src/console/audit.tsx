import { useEffect, useState } from 'preact/hooks'
import type { AuditPage as AuditPageView } from '../modules/audit/model'
import { api, session } from './api'
import { ErrorNote, saveFile } from './ui'

type AuditPage = typeof AuditPageView.static

/** Who changed what: newest first, filtered by action, a page at a time; the window as CSV. */
export function Audit({ orgId }: { orgId: string }) {
  const [action, setAction] = useState('')
  const [pages, setPages] = useState<AuditPage[]>([])
  const [error, setError] = useState<string>()
  const base = `/v1/organization/${encodeURIComponent(orgId)}`

  const load = async (cursor?: string) => {
    setError(undefined)
    const query = new URLSearchParams({ limit: '100', ...(action ? { action } : {}), ...(cursor ? { cursor } : {}) })
    try {
      const page = await api<AuditPage>('GET', `${base}/audit?${query}`)
      setPages((loaded) => (cursor ? [...loaded, page] : [page]))
    } catch (failure) {
      setError((failure as Error).message)
    }
  }
  useEffect(() => {
    load()
  }, [action])

  // The export needs the bearer token, which a plain link cannot send: it is fetched, then saved.
  const download = async () => {
    setError(undefined)
    const query = new URLSearchParams(action ? { action } : {})
    const response = await fetch(`${base}/audit.csv?${query}`, { headers: { authorization: `Bearer ${session.get()?.token}` } })
    if (!response.ok) {
      setError(
        ((await response.json().catch(() => undefined)) as { error?: { message?: string } })?.error?.message ??
          'the export failed',
      )
      return
    }
    const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'audit.csv'
    saveFile(name, await response.blob())
  }

  const entries = pages.flatMap((page) => page.entries)
  const next = pages.at(-1)?.nextCursor
  return (
    <section aria-labelledby="audit">
      <h1 id="audit">Audit log</h1>
      <form
        class="inline"
        aria-label="Filter"
        onSubmit={(event) => {
          event.preventDefault()
          setAction(String(new FormData(event.currentTarget as HTMLFormElement).get('action') ?? '').trim())
        }}
      >
        <label>
          Action
          <input name="action" placeholder="every action" defaultValue={action} />
        </label>
        <button type="submit">Filter</button>
        <button type="button" class="quiet" onClick={download}>
          Export CSV
        </button>
      </form>
      <ErrorNote error={error} />
      {pages.length === 0 && !error && <p class="muted">Loading…</p>}
      {pages.length > 0 && entries.length === 0 && <p class="muted">No entries match.</p>}
      {entries.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Who</th>
              <th scope="col">From</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td>{new Date(entry.createdAt).toLocaleString()}</td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>{entry.target ?? '-'}</td>
                <td>
                  {entry.principalKind}
                  {entry.actorId ? ` ${entry.actorId.slice(0, 8)}` : ''}
                </td>
                <td>{entry.sourceIp ?? '-'}</td>
                <td>{entry.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" class="quiet" onClick={() => load(next)}>
          More
        </button>
      )}
    </section>
  )
}
