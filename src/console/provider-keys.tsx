import { useState } from 'preact/hooks'
import type { ProviderKey as ProviderKeyView } from '../modules/provider-keys/model'
import { api } from './api'
import { ErrorNote, useList } from './ui'

/** A provider key as the API shows it: the secret masked; its weight is its share of the provider's calls. */
export type ProviderKey = typeof ProviderKeyView.static

export const PROVIDER_KEYS_PATH = '/v1/api-keys/provider-keys'
const MAX_WEIGHT = 1_000
const DEFAULT_WEIGHT = 1

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

/** What a weight means beside the provider's other keys: a share of the calls, or standby. */
function shareText(key: ProviderKey, keys: ProviderKey[]): string {
  const total = keys.filter((other) => other.provider === key.provider).reduce((sum, other) => sum + other.weight, 0)
  if (total === 0) return `standby; no ${key.provider} key has a weight, so they share the calls`
  if (key.weight === 0) return 'standby: used when the others cool down'
  return `${percent.format(key.weight / total)} of ${key.provider} calls`
}

/** A weight typed, then saved: one call, not one per arrow key pressed. */
function WeightChange({ providerKey, onSave }: { providerKey: ProviderKey; onSave(weight: number): void }) {
  const [weight, setWeight] = useState(String(providerKey.weight))
  return (
    <form
      class="weight"
      onSubmit={(event) => {
        event.preventDefault()
        onSave(Number(weight))
      }}
    >
      <input
        type="number"
        min={0}
        max={MAX_WEIGHT}
        step={1}
        required
        aria-label={`Weight of ${providerKey.name}`}
        value={weight}
        onInput={(event) => setWeight(event.currentTarget.value)}
      />
      <button
        type="submit"
        class="quiet"
        disabled={weight === String(providerKey.weight)}
        aria-label={`Save the weight of ${providerKey.name}`}
      >
        Save
      </button>
    </form>
  )
}

/**
 * The organisation's own provider keys. A secret goes in once and is never shown again: reads answer
 * it masked. The whole page needs provider_keys.write (the API lists them under it).
 */
export function ProviderKeys() {
  const { items: keys, error, change } = useList<ProviderKey>(PROVIDER_KEYS_PATH)

  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const baseUrl = String(data.get('baseUrl') ?? '').trim()
    const weight = String(data.get('weight') ?? '').trim()
    const added = await change(() =>
      api('POST', '/v1/api-keys/provider-key', {
        provider: data.get('provider'),
        name: data.get('name'),
        secret: data.get('secret'),
        ...(baseUrl ? { baseUrl } : {}),
        ...(weight ? { weight: Number(weight) } : {}),
      }),
    )
    if (added) form.reset()
  }
  const setWeight = (key: ProviderKey, weight: number) =>
    change(() => api('PATCH', `/v1/api-keys/provider-key/${encodeURIComponent(key.id)}`, { weight }))
  const remove = (key: ProviderKey) => change(() => api('DELETE', `/v1/api-keys/provider-key/${encodeURIComponent(key.id)}`))

  return (
    <section class="provider-keys" aria-labelledby="provider-keys">
      <h1 id="provider-keys">Provider keys</h1>
      <p class="muted">
        Calls and batches run on these before the operator's keys, shared among a provider's keys by weight; a key that fails
        cools down while the others take its share. A secret is never shown again once saved.
      </p>
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
        <label>
          Weight (0 to {MAX_WEIGHT}; 0: standby)
          <input name="weight" type="number" min={0} max={MAX_WEIGHT} step={1} defaultValue={String(DEFAULT_WEIGHT)} />
        </label>
        <button type="submit">Add key</button>
      </form>
      {!keys && !error && <p class="muted">Loading…</p>}
      {keys && keys.length === 0 && <p class="muted">No provider keys: calls run on the operator's keys, billed to credits.</p>}
      {keys && keys.length > 0 && (
        <table aria-label="Provider keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Provider</th>
              <th scope="col">Weight</th>
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
                  <WeightChange key={key.weight} providerKey={key} onSave={(weight) => setWeight(key, weight)} />
                  <span class="muted" data-share>
                    {shareText(key, keys)}
                  </span>
                </td>
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
