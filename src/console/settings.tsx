import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { ErrorNote } from './ui'

interface Settings {
  name?: string
  tier?: string
  bodyRetention: { mode: 'none' } | { mode: 'days'; days: number }
  piiRedaction: boolean
  streamMetaFrame: boolean
}

/** The organisation's policies for stored bodies and streams; changed only by those who hold org.settings.write. */
export function SettingsPage({ canWrite }: { canWrite: boolean }) {
  const [settings, setSettings] = useState<Settings>()
  const [error, setError] = useState<string>()
  const [saved, setSaved] = useState<string>()
  useEffect(() => {
    api<Settings>('GET', '/v1/organization/settings')
      .then(setSettings)
      .catch((failure: Error) => setError(failure.message))
  }, [])

  const change = async (what: string, path: string, body: unknown) => {
    setError(undefined)
    setSaved(undefined)
    try {
      setSettings(await api<Settings>('POST', path, body))
      setSaved(`${what} saved`)
    } catch (failure) {
      setError((failure as Error).message)
    }
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
    </section>
  )
}
