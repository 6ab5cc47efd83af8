import { api } from './api'
import { ErrorNote, useList } from './ui'

interface ProviderKey {
  id: string
  provider: 'openai' | 'anthropic'
  name: string
  baseUrl: string | null
  secret: string
  createdAt: string
}

/**
 * The organisation's own provider keys. A secret goes in once and is never shown again: reads answer
 * it masked. The whole page needs provider_keys.write (the API lists them under it).
 */
export function ProviderKeys() {
  const { items: keys, error, change } = useList<ProviderKey>('/v1/api-keys/provider-keys')

  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const baseUrl = String(data.get('baseUrl') ?? '').trim()
    const added = await change(() =>
      api('POST', '/v1/api-keys/provider-key', {
        provider: data.get('provider'),
        name: data.get('name'),
        secret: data.get('secret'),
        ...(baseUrl ? { baseUrl } : {}),
      }),
    )
    if (added) form.reset()
  }
  const remove = (key: ProviderKey) => change(() => api('DELETE', `/v1/api-keys/provider-key/${encodeURIComponent(key.id)}`))

  return (
    <section aria-labelledby="provider-keys">
      <h1 id="provider-keys">Provider keys</h1>
      <p class="muted">Calls and batches run on these before the operator's keys; a secret is never shown again once saved.</p>
      <ErrorNote error={error} />
      <form class="inline" onSubmit={add} aria-label="New provider key">
        <label>
          Provider
          <select name="provider">
            <option value="openai">OpenAI-compatible</option>
            <option value="anthropic">Anthropic</option>
          </select>
        </label>
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <label>
          Secret
          <input name="secret" type="password" required autocomplete="off" maxLength={4096} />
        </label>
        <label>
          Base URL (optional)
          <input name="baseUrl" type="url" placeholder="the provider's own" />
        </label>
        <button type="submit">Add key</button>
      </form>
      {!keys && !error && <p class="muted">Loading…</p>}
      {keys && keys.length === 0 && <p class="muted">No provider keys: calls run on the operator's keys, billed to credits.</p>}
      {keys && keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Provider</th>
              <th scope="col">Secret</th>
              <th scope="col">Base URL</th>
              <th scope="col">Added</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>{key.provider}</td>
                <td>
                  <code data-masked>{key.secret}</code>
                </td>
                <td>{key.baseUrl ?? '-'}</td>
                <td>{new Date(key.createdAt).toLocaleString()}</td>
                <td>
                  <button type="button" class="quiet" onClick={() => remove(key)} aria-label={`Delete ${key.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
