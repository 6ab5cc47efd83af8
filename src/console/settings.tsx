import { useEffect, useState } from 'preact/hooks'
import type { OrganizationSettings } from '../modules/organization/model'
import type { SavedFilter } from '../modules/saved-views/model'
import { api } from './api'
import { RecordRetentionForm } from './record-retention'
import { ErrorNote, useAction, useList } from './ui'

type Settings = typeof OrganizationSettings.static

/** The organisation's policies for stored bodies and streams; changed only by those who hold org.settings.write. */
export function SettingsPage({ canWrite }: { canWrite: boolean }) {
  const [settings, setSettings] = useState<Settings>()
  const { error, setError, run } = useAction()
  const [saved, setSaved] = useState<string>()
  useEffect(() => {
    api<Settings>('GET', '/v1/organization/settings')
      .then(setSettings)
      .catch((failure: Error) => setError(failure.message))
  }, [])

  const change = (what: string, path: string, body: unknown) => {
    setSaved(undefined)
    return run(async () => {
      setSettings(await api<Settings>('POST', path, body))
      setSaved(`${what} saved`)
    })
  }
  const saveRetention = (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    const keep = data.get('keep') === 'on'
    change(
      'Body retention',
      '/v1/organization/body-retention-config',
      keep ? { mode: 'days', days: Number(data.get('days')) } : { mode: 'none' },
    )
  }

  if (!settings)
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading…</p>
    )
  const retention = settings.bodyRetention
  return (
    <section aria-labelledby="settings">
      <h1 id="settings">Settings</h1>
      <p class="muted">
        {settings.name} · {settings.tier} tier
      </p>
      <ErrorNote error={error} />
      {saved && <p role="status">{saved}</p>}
      <form class="setting" onSubmit={saveRetention} aria-label="Body retention">
        <fieldset disabled={!canWrite}>
          <legend>Request and response bodies</legend>
          <label class="check">
            <input type="checkbox" name="keep" defaultChecked={retention.mode === 'days'} /> Keep bodies
          </label>
          <label>
            Days kept
            <input
              name="days"
              type="number"
              min={1}
              max={3650}
              defaultValue={String(retention.mode === 'days' ? retention.days : 30)}
            />
          </label>
          <button type="submit">Save retention</button>
        </fieldset>
      </form>
      <RecordRetentionForm retention={settings.requestRetention} canWrite={canWrite} change={change} />
      <fieldset class="setting" disabled={!canWrite}>
        <legend>Privacy and streams</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={settings.piiRedaction}
            onChange={(event) =>
              change('PII redaction', '/v1/organization/pii-config', {
                redact: (event.currentTarget as HTMLInputElement).checked,
              })
            }
          />{' '}
          Redact emails, phone and card numbers and secrets in stored bodies
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={settings.streamMetaFrame}
            onChange={(event) =>
              change('Stream metadata', '/v1/organization/stream-meta-config', {
                frame: (event.currentTarget as HTMLInputElement).checked,
              })
            }
          />{' '}
          End every stream with the gw metadata frame (otherwise only calls that send Gw-Stream-Meta: frame)
        </label>
      </fieldset>
      <SavedViews canWrite={canWrite} />
    </section>
  )
}

type SavedView = typeof SavedFilter.static

/** The organisation's saved request filters: made and applied on the Requests page, renamed and deleted here too. */
function SavedViews({ canWrite }: { canWrite: boolean }) {
  const { items: views, error, change } = useList<SavedView>('/v1/filter')
  const rename = (view: SavedView) => async (event: Event) => {
    event.preventDefault()
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name') ?? '').trim()
    await change(() => api('PATCH', `/v1/filter/${encodeURIComponent(view.id)}`, { name }))
  }
  return (
    <section aria-labelledby="saved-views">
      <h2 id="saved-views">Saved views</h2>
      <p class="muted">Filters of the request log kept under a name; make them on the Requests page.</p>
      <ErrorNote error={error} />
      {!views && !error && <p class="muted">Loading…</p>}
      {views && views.length === 0 && <p class="muted">No saved views yet.</p>}
      {views && views.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Changed</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {views.map((view) => (
              <tr key={view.id}>
                <td>
                  {canWrite ? (
                    <form class="inline" aria-label={`Rename ${view.name}`} onSubmit={rename(view)}>
                      <input name="name" aria-label={`Name of ${view.name}`} required maxLength={200} defaultValue={view.name} />
                      <button type="submit" class="quiet">
                        Rename
                      </button>
                    </form>
                  ) : (
                    view.name
                  )}
                </td>
                <td>{new Date(view.updatedAt).toLocaleString()}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="quiet"
                      aria-label={`Delete ${view.name}`}
                      onClick={() => change(() => api('DELETE', `/v1/filter/${encodeURIComponent(view.id)}`))}
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
    </section>
  )
}
