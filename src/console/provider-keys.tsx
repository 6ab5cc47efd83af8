import { useEffect, useState } from 'preact/hooks'
import type { CreateProviderKeyInput, ProviderKey as ProviderKeyView } from '../modules/provider-keys/model'
import type { GatewayProvider as GatewayProviderView } from '../modules/providers/model'
import { api } from './api'
import { ErrorNote, fieldValue, useList } from './ui'

/** A provider key as the API shows it: the secret masked; its weight is its share of the provider's calls. */
export type ProviderKey = typeof ProviderKeyView.static
/** A provider as the organisation sees it: whether the operator configured it, its key count, its models. */
export type GatewayProvider = typeof GatewayProviderView.static
type ProviderKind = GatewayProvider['kind']
type Setting = 'region' | 'accessKeyId' | 'apiVersion' | 'project' | 'location'

export const PROVIDER_KEYS_PATH = '/v1/api-keys/provider-keys'
export const PROVIDERS_PATH = '/v1/gateway/providers'
const MAX_WEIGHT = 1_000
const DEFAULT_WEIGHT = 1
/** A Vertex key is a service account's JSON key file, a few kilobytes. */
const MAX_SECRET = 16_384

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

/** A field of a key's form beyond its name, secret and weight: where it is, and as whom it is called. */
interface Field {
  label: string
  required?: boolean
  placeholder?: string
  pattern?: string
}

/**
 * What a key of each kind of provider is made of, as the API checks it: only the fields its provider
 * takes are shown (any other is refused), and those it cannot do without are required before sending.
 */
const KEY_FORMS: Record<
  ProviderKind,
  { secret: string; multiline?: true; baseUrl: Field; settings: Partial<Record<Setting, Field>>; aliases: string }
> = {
  'openai-compatible': {
    secret: 'Secret',
    baseUrl: { label: 'Base URL (optional)', placeholder: "the provider's own" },
    settings: {},
    aliases: 'gpt-4o=my-fine-tune',
  },
  anthropic: {
    secret: 'Secret',
    baseUrl: { label: 'Base URL (optional)', placeholder: "the provider's own" },
    settings: {},
    aliases: 'claude=claude-sonnet-4-5',
  },
  gemini: {
    secret: 'Secret (API key)',
    baseUrl: { label: 'Base URL (optional)', placeholder: "the provider's own" },
    settings: {},
    aliases: 'flash=gemini-2.5-flash',
  },
  azure: {
    secret: "Secret (the resource's api-key)",
    baseUrl: { label: 'Endpoint', required: true, placeholder: 'https://<resource>.openai.azure.com' },
    settings: {
      apiVersion: { label: 'API version (optional)', placeholder: '2024-10-21', pattern: '\\d{4}-\\d{2}-\\d{2}(-preview)?' },
    },
    aliases: 'gpt-4o=prod-4o',
  },
  bedrock: {
    secret: 'Secret access key',
    baseUrl: { label: 'Base URL (optional)', placeholder: "the region's own" },
    settings: {
      region: { label: 'Region', required: true, placeholder: 'us-east-1', pattern: '[a-z]{2,}(-[a-z0-9]+)+' },
      accessKeyId: { label: 'Access key id', required: true, placeholder: 'AKIA…', pattern: '[A-Z0-9]{16,128}' },
    },
    aliases: 'claude-sonnet-4-5=us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  },
  vertex: {
    secret: "Secret (the service account's JSON key file)",
    multiline: true,
    baseUrl: { label: 'Base URL (optional)', placeholder: "the location's own" },
    settings: {
      project: { label: "Project (optional: the account's own)", placeholder: 'my-project' },
      location: { label: 'Location (optional)', placeholder: 'global' },
    },
    aliases: 'flash=gemini-2.5-flash',
  },
}

const SETTING_NAMES: Record<Setting, string> = {
  region: 'region',
  accessKeyId: 'access key id',
  apiVersion: 'API version',
  project: 'project',
  location: 'location',
}

/** `name=provider-name` pairs, separated by commas or spaces: the model names callers use, to the provider's own. */
function aliasesOf(text: string): Record<string, string> | undefined {
  const pairs = text.split(/[\s,]+/).filter(Boolean)
  if (pairs.length === 0) return undefined
  return Object.fromEntries(
    pairs.map((pair) => {
      const [name, target, ...rest] = pair.split('=')
      if (!name || !target || rest.length > 0)
        throw new Error(`model aliases: "${pair}" is not name=provider-name (such as gpt-4o=prod-4o)`)
      return [name, target]
    }),
  )
}

/** What a key's settings say, in a line: its region, account, version, location and aliases. */
function settingsText(key: ProviderKey): string {
  const settings = (Object.keys(SETTING_NAMES) as Setting[]).flatMap((name) =>
    key[name] === undefined ? [] : [`${SETTING_NAMES[name]} ${key[name]}`],
  )
  const aliases = Object.entries(key.models ?? {}).map(([name, target]) => `${name} → ${target}`)
  return [...settings, ...(aliases.length > 0 ? [`models: ${aliases.join(', ')}`] : [])].join('; ') || '-'
}

/** What a weight means beside the provider's other keys: a share of the calls, or standby. */
function shareText(key: ProviderKey, keys: ProviderKey[]): string {
  const total = keys.filter((other) => other.provider === key.provider).reduce((sum, other) => sum + other.weight, 0)
  if (total === 0) return `standby; no ${key.provider} key has a weight, so they share the calls`
  if (key.weight === 0) return 'standby: used when the others cool down'
  return `${percent.format(key.weight / total)} of ${key.provider} calls`
}

/** The organisation's provider keys, to name one by; only those who may manage keys can list them. */
export function useProviderKeys(allowed: boolean): ProviderKey[] | undefined {
  const [keys, setKeys] = useState<ProviderKey[]>()
  useEffect(() => {
    if (!allowed) return
    api<ProviderKey[]>('GET', PROVIDER_KEYS_PATH)
      .then(setKeys)
      // Without the list a key shows as its id, as it does for those who may not list them.
      .catch(() => setKeys(undefined))
  }, [allowed])
  return keys
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

/** The body of a new key, read from the form: only the fields its provider's form shows. */
function newKey(provider: GatewayProvider, data: FormData): CreateProviderKeyInput {
  const text = (name: string) => String(data.get(name) ?? '').trim()
  const shape = KEY_FORMS[provider.kind]
  const settings = Object.fromEntries(
    (Object.keys(shape.settings) as Setting[]).flatMap((name) => (text(name) ? [[name, text(name)]] : [])),
  )
  const models = aliasesOf(text('models'))
  return {
    provider: provider.name,
    name: text('name'),
    // A key file keeps its line breaks; a pasted API key loses the spaces around it.
    secret: shape.multiline ? String(data.get('secret') ?? '') : text('secret'),
    ...(text('baseUrl') ? { baseUrl: text('baseUrl') } : {}),
    ...(text('weight') ? { weight: Number(text('weight')) } : {}),
    ...settings,
    ...(models ? { models } : {}),
  }
}

/** The form of a new key: its provider first, then the fields that provider takes. */
function NewKeyForm({
  providers,
  onAdd,
}: {
  providers: GatewayProvider[]
  /** Sends the key `read` makes of the form; what `read` throws (a malformed alias) is shown as the API's refusals are. */
  onAdd(read: () => CreateProviderKeyInput): Promise<boolean>
}) {
  const [chosen, setChosen] = useState<string>(providers[0]?.name ?? '')
  // Each key added starts the next form afresh, for the same provider; a provider chosen keeps what was typed.
  const [made, setMade] = useState(0)
  const provider = providers.find((candidate) => candidate.name === chosen) ?? providers[0]
  if (!provider) return null
  const shape = KEY_FORMS[provider.kind]
  const add = async (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    if (await onAdd(() => newKey(provider, data))) setMade((count) => count + 1)
  }
  return (
    <form key={made} class="inline new-key" onSubmit={add} aria-label="New provider key">
      <label>
        Provider
        <select name="provider" value={provider.name} onChange={(event) => setChosen(fieldValue(event))}>
          {providers.map((candidate) => (
            <option key={candidate.name} value={candidate.name}>
              {candidate.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      {shape.multiline ? (
        <label class="wide">
          {shape.secret}
          <textarea
            name="secret"
            required
            rows={3}
            maxLength={MAX_SECRET}
            spellcheck={false}
            placeholder='{"type": "service_account", …}'
          />
        </label>
      ) : (
        <label>
          {shape.secret}
          <input name="secret" type="password" required autocomplete="off" maxLength={MAX_SECRET} />
        </label>
      )}
      {(Object.entries(shape.settings) as Array<[Setting, Field]>).map(([name, field]) => (
        <label key={name}>
          {field.label}
          <input name={name} required={field.required} placeholder={field.placeholder} pattern={field.pattern} />
        </label>
      ))}
      <label>
        {shape.baseUrl.label}
        <input name="baseUrl" type="url" required={shape.baseUrl.required} placeholder={shape.baseUrl.placeholder} />
      </label>
      <label class="aliases">
        Model aliases (optional)
        <input name="models" placeholder={shape.aliases} />
      </label>
      <label>
        Weight (0 to {MAX_WEIGHT}; 0: standby)
        <input name="weight" type="number" min={0} max={MAX_WEIGHT} step={1} defaultValue={String(DEFAULT_WEIGHT)} />
      </label>
      <button type="submit">Add key</button>
    </form>
  )
}

/**
 * The organisation's own provider keys. A secret goes in once and is never shown again: reads answer
 * it masked. The whole page needs provider_keys.write (the API lists them under it).
 */
export function ProviderKeys() {
  const { items: keys, error, change } = useList<ProviderKey>(PROVIDER_KEYS_PATH)
  const { items: providers, error: providersError } = useList<GatewayProvider>(PROVIDERS_PATH)

  const add = (read: () => CreateProviderKeyInput) => change(() => api('POST', '/v1/api-keys/provider-key', read()))
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
      <ErrorNote error={error ?? providersError} />
      {providers && <NewKeyForm providers={providers} onAdd={add} />}
      {((!keys && !error) || (!providers && !providersError)) && <p class="muted">Loading…</p>}
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
              <th scope="col">Settings</th>
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
                <td data-settings>{settingsText(key)}</td>
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
