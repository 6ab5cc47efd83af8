import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { formatWhen } from './format'
import { type ApiKey, type IssuedApiKey, type ScopeEntitlement, useScopeEntitlement } from './keys'
import type { ProviderKey } from './provider-keys'
import { ErrorNote, type PageProps, ShownOnce, useList } from './ui'

const state = (key: ApiKey) =>
  key.revokedAt ? 'revoked' : key.expiresAt && new Date(key.expiresAt).getTime() <= Date.now() ? 'expired' : 'active'

/** The scopes a form names: the capabilities ticked, then the allowlist entries typed, comma-separated. */
function scopesOf(form: HTMLFormElement): string[] {
  const data = new FormData(form)
  const typed = String(data.get('allowlist') ?? '')
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '')
  return [...data.getAll('scope').map(String), ...typed]
}

/** The scope choices, the same on the new key and on a key being changed (so a change keeps what it does not touch). */
function ScopeFields({ entitlement, current = [] }: { entitlement: ScopeEntitlement; current?: string[] }) {
  const typed = current.filter((scope) => !entitlement.capabilities.includes(scope))
  return (
    <>
      <fieldset>
        <legend>Capabilities (none: all of them)</legend>
        {entitlement.capabilities.map((capability) => (
          <label class="check" key={capability}>
            <input type="checkbox" name="scope" value={capability} defaultChecked={current.includes(capability)} /> {capability}
          </label>
        ))}
      </fieldset>
      <label>
        Allowlist (optional, comma-separated: {entitlement.allowlists.join(', ')})
        <input name="allowlist" defaultValue={typed.join(', ')} maxLength={2000} />
      </label>
    </>
  )
}

/** A proxy key's scopes, changed in place by those who hold keys.write. */
function ScopesEditor(props: {
  proxyKey: ApiKey
  entitlement: ScopeEntitlement
  save: (scopes: string[]) => Promise<boolean>
  close: () => void
}) {
  const submit = async (event: Event) => {
    event.preventDefault()
    if (await props.save(scopesOf(event.currentTarget as HTMLFormElement))) props.close()
  }
  return (
    <form class="inline scopes-editor" onSubmit={submit} aria-label={`Scopes of ${props.proxyKey.name}`}>
      <ScopeFields entitlement={props.entitlement} current={props.proxyKey.scopes} />
      <button type="submit">Save scopes</button>
      <button type="button" class="quiet" onClick={props.close}>
        Cancel
      </button>
    </form>
  )
}

/**
 * Proxy keys: gw keys bound to one of the organisation's provider keys. Everyone in the organisation
 * sees them; those who hold keys.write create them (the secret shown once), change their scopes and
 * revoke them. Naming the provider keys needs provider_keys.write, so others see the provider key's id.
 */
export function ProxyKeys({ can }: PageProps) {
  const canWrite = can('keys.write')
  const { items: keys, error, change } = useList<ApiKey>('/v1/api-keys')
  const entitlement = useScopeEntitlement()
  const [providerKeys, setProviderKeys] = useState<ProviderKey[]>()
  const [providerKeysError, setProviderKeysError] = useState<string>()
  const [issued, setIssued] = useState<{ name: string; key: string }>()
  const [editing, setEditing] = useState<string>()
  const mayListProviderKeys = canWrite || can('provider_keys.write')
  useEffect(() => {
    if (!mayListProviderKeys) return
    api<ProviderKey[]>('GET', '/v1/api-keys/provider-keys')
      .then(setProviderKeys)
      .catch((failure: Error) => setProviderKeysError(failure.message))
  }, [mayListProviderKeys])

  const proxyKeys = keys?.filter((key) => key.providerKeyId !== null)
  const providerKeyName = (id: string) => providerKeys?.find((key) => key.id === id)?.name

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const scopes = scopesOf(form)
    const created = await change(async () => {
      const key = await api<IssuedApiKey>('POST', '/v1/api-keys/proxy-key', {
        name: data.get('name'),
        providerKeyId: data.get('providerKeyId'),
        ...(scopes.length > 0 ? { scopes } : {}),
      })
      setIssued({ name: key.name, key: key.key })
    })
    if (created) form.reset()
  }
  const setScopes = (key: ApiKey, scopes: string[]) =>
    change(() => api('PUT', `/v1/api-keys/proxy-key/${encodeURIComponent(key.id)}/scopes`, { scopes }))
  const revoke = (key: ApiKey) => change(() => api('DELETE', `/v1/api-keys/${encodeURIComponent(key.id)}`))

  return (
    <section class="access" aria-labelledby="proxy-keys">
      <h1 id="proxy-keys">Proxy keys</h1>
      <ErrorNote error={error} />
      {issued && (
        <ShownOnce secret={issued.key} done="I have saved it" onDone={() => setIssued(undefined)}>
          The key <strong>{issued.name}</strong> is shown this once: gw keeps only its hash.
        </ShownOnce>
      )}
      {canWrite && providerKeysError && (
        <p class="error" role="alert">
          The provider keys to bind a new proxy key to cannot be listed: {providerKeysError}
        </p>
      )}
      {canWrite && providerKeys && providerKeys.length === 0 && (
        <p class="muted">
          A proxy key needs a provider key to bind to, and the organisation has none yet
          {can('provider_keys.write') ? (
            <>
              : add one under <a href="#/provider-keys">Provider keys</a>.
            </>
          ) : (
            '.'
          )}
        </p>
      )}
      {canWrite && providerKeys && providerKeys.length > 0 && (
        <form class="inline" onSubmit={create} aria-label="New proxy key">
          <label>
            Name
            <input name="name" required maxLength={200} />
          </label>
          <label>
            Provider key
            <select name="providerKeyId" required>
              {providerKeys.map((key) => (
                <option key={key.id} value={key.id}>
                  {key.name} ({key.provider})
                </option>
              ))}
            </select>
          </label>
          <ScopeFields entitlement={entitlement} />
          <button type="submit">Create proxy key</button>
        </form>
      )}
      {!keys && !error && <p class="muted">Loading…</p>}
      {proxyKeys && proxyKeys.length === 0 && (
        <p class="muted">
          No proxy keys yet: a proxy key is a gw key that calls models with one of the organisation's provider keys, and no other.
        </p>
      )}
      {proxyKeys && proxyKeys.length > 0 && (
        <table class="proxy-keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Provider key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {proxyKeys.map((key) => {
              const providerKeyId = key.providerKeyId ?? ''
              const active = state(key) === 'active'
              return (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{providerKeyName(providerKeyId) ?? <code>{providerKeyId}</code>}</td>
                  <td>
                    {editing === key.id ? (
                      <ScopesEditor
                        proxyKey={key}
                        entitlement={entitlement}
                        save={(scopes) => setScopes(key, scopes)}
                        close={() => setEditing(undefined)}
                      />
                    ) : key.scopes.length > 0 ? (
                      key.scopes.join(', ')
                    ) : (
                      'every Member permission'
                    )}
                  </td>
                  <td>{formatWhen(key.createdAt)}</td>
                  <td>{formatWhen(key.lastUsedAt)}</td>
                  <td>{state(key)}</td>
                  {canWrite && (
                    <td>
                      {active && (
                        <div class="row-actions">
                          {editing !== key.id && (
                            <button
                              type="button"
                              class="quiet"
                              onClick={() => setEditing(key.id)}
                              aria-label={`Change scopes of ${key.name}`}
                            >
                              Change scopes
                            </button>
                          )}
                          <button type="button" class="quiet" onClick={() => revoke(key)} aria-label={`Revoke ${key.name}`}>
                            Revoke
                          </button>
                        </div>
                      )}
                    </td>
                  )}
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
    </section>
  )
}
