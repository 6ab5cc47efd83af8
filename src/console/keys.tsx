import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { ErrorNote, ShownOnce, useList } from './ui'

interface ApiKey {
  id: string
  name: string
  prefix: string
  scopes: string[]
  providerKeyId: string | null
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

interface Entitlement {
  capabilities: string[]
}

const when = (iso: string | null) => (iso === null ? '-' : new Date(iso).toLocaleString())

/** API keys: the list, and for those who may, a new key (its secret shown once) and revoking one. */
export function Keys({ canWrite }: { canWrite: boolean }) {
  const { items: keys, error, change } = useList<ApiKey>('/v1/api-keys')
  const [capabilities, setCapabilities] = useState<string[]>([])
  const [issued, setIssued] = useState<{ name: string; key: string }>()
  useEffect(() => {
    api<Entitlement>('GET', '/v1/api-keys/scopes/entitlement')
      .then((entitlement) => setCapabilities(entitlement.capabilities))
      .catch(() => setCapabilities([]))
  }, [])

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const scopes = data.getAll('scope').map(String)
    const created = await change(async () => {
      const key = await api<ApiKey & { key: string }>('POST', '/v1/api-keys', {
        name: data.get('name'),
        ...(scopes.length > 0 ? { scopes } : {}),
      })
      setIssued({ name: key.name, key: key.key })
    })
    if (created) form.reset()
  }
  const revoke = (key: ApiKey) => change(() => api('DELETE', `/v1/api-keys/${encodeURIComponent(key.id)}`))

  return (
    <section aria-labelledby="keys">
      <h1 id="keys">API keys</h1>
      <ErrorNote error={error} />
      {issued && (
        <ShownOnce secret={issued.key} done="I have saved it" onDone={() => setIssued(undefined)}>
          The key <strong>{issued.name}</strong> is shown this once: gw keeps only its hash.
        </ShownOnce>
      )}
      {canWrite && (
        <form class="inline" onSubmit={create} aria-label="New API key">
          <label>
            Name
            <input name="name" required maxLength={200} />
          </label>
          <fieldset>
            <legend>Scopes (none: every Member permission)</legend>
            {capabilities.map((capability) => (
              <label class="check" key={capability}>
                <input type="checkbox" name="scope" value={capability} /> {capability}
              </label>
            ))}
          </fieldset>
          <button type="submit">Create key</button>
        </form>
      )}
      {!keys && !error && <p class="muted">Loading…</p>}
      {keys && keys.length === 0 && <p class="muted">No API keys yet.</p>}
      {keys && keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>{key.scopes.length > 0 ? key.scopes.join(', ') : 'every Member permission'}</td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.lastUsedAt)}</td>
                <td>{key.revokedAt ? 'revoked' : key.providerKeyId ? 'proxy key' : 'active'}</td>
                {canWrite && (
                  <td>
                    {!key.revokedAt && (
                      <button type="button" class="quiet" onClick={() => revoke(key)} aria-label={`Revoke ${key.name}`}>
                        Revoke
                      </button>
                    )}
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
