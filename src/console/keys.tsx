import { useEffect, useState } from 'preact/hooks'
import type {
  ApiKey as ApiKeyView,
  ScopeEntitlement as EntitlementView,
  IssuedApiKey as IssuedKeyView,
} from '../modules/api-keys/model'
import { api } from './api'
import { formatWhen } from './format'
import { ErrorNote, ShownOnce, useList } from './ui'

/** An API key as the list shows it: a proxy key has a provider key. */
export type ApiKey = typeof ApiKeyView.static
/** A key just made: its secret is in this answer only. */
export type IssuedApiKey = typeof IssuedKeyView.static

/** The scopes a key may be given: capabilities, and the allowlist forms (`model:<id>`, ...). */
export type ScopeEntitlement = Pick<typeof EntitlementView.static, 'capabilities' | 'allowlists'>

const NO_SCOPES: ScopeEntitlement = { capabilities: [], allowlists: [] }

export function useScopeEntitlement(): ScopeEntitlement {
  const [entitlement, setEntitlement] = useState<ScopeEntitlement>(NO_SCOPES)
  useEffect(() => {
    api<ScopeEntitlement>('GET', '/v1/api-keys/scopes/entitlement')
      .then(setEntitlement)
      .catch(() => setEntitlement(NO_SCOPES))
  }, [])
  return entitlement
}

/** API keys: the list, and for those who may, a new key (its secret shown once) and revoking one. */
export function Keys({ canWrite }: { canWrite: boolean }) {
  const { items: keys, error, change } = useList<ApiKey>('/v1/api-keys')
  const { capabilities } = useScopeEntitlement()
  const [issued, setIssued] = useState<{ name: string; key: string }>()

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const scopes = data.getAll('scope').map(String)
    const created = await change(async () => {
      const key = await api<IssuedApiKey>('POST', '/v1/api-keys', {
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
                <td>{formatWhen(key.createdAt)}</td>
                <td>{formatWhen(key.lastUsedAt)}</td>
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
