import { useState } from 'preact/hooks'
import type { GatewayTestInput, GatewayTestResult } from '../modules/traffic/model'
import { api } from './api'
import { formatCount, formatMs, formatUsd } from './format'
import { type GatewayProvider, PROVIDERS_PATH, type ProviderKey, useProviderKeys } from './provider-keys'
import { ErrorNote, fieldValue, type PageProps, useAction, useList } from './ui'

type TestResult = typeof GatewayTestResult.static
type Model = GatewayProvider['models'][number]

const plural = (count: number, one: string, many: string) => `${formatCount(count)} ${count === 1 ? one : many}`
const price = (usd: number | null) => (usd === null ? '-' : formatUsd(usd))

/** Whom a provider's calls run on: the organisation's own keys first, else the operator's connection. */
function readiness(provider: GatewayProvider): string {
  if (provider.keys > 0) return `calls run on your own ${provider.keys === 1 ? 'key' : `${formatCount(provider.keys)} keys`}`
  if (provider.operator.configured) return "calls run on the operator's connection, billed to credits"
  return 'not set up: add a key of your own to call it'
}

/** The model a test names: the card's provider always, whatever was typed. */
const testModel = (provider: GatewayProvider, typed: string) =>
  typed.startsWith(`${provider.name}/`) ? typed : `${provider.name}/${typed}`

/**
 * The providers gw calls, one card each: whether the operator configured it (only that: the operator's
 * keys and addresses are not the organisation's business), how many keys of its own the organisation
 * has, its catalogued models with their prices, and a test that makes one tiny call through the
 * organisation's own path. Everyone reads it (org.read); the test needs traffic.read.
 */
export function Providers({ can }: PageProps) {
  const { items: providers, error } = useList<GatewayProvider>(PROVIDERS_PATH)
  const canManageKeys = can('provider_keys.write')
  const keys = useProviderKeys(canManageKeys)
  const ready = providers?.filter((provider) => provider.keys > 0 || provider.operator.configured) ?? []
  const others = providers?.filter((provider) => !ready.includes(provider)) ?? []
  const card = (provider: GatewayProvider) => (
    <ProviderCard
      key={provider.name}
      provider={provider}
      keys={keys?.filter((key) => key.provider === provider.name) ?? []}
      canManageKeys={canManageKeys}
      canTest={can('traffic.read')}
    />
  )
  return (
    <section class="providers" aria-labelledby="providers">
      <h1 id="providers">Providers</h1>
      <p class="muted">
        Every provider gw calls. A call runs on your own keys of its provider, shared by weight; without one, on the operator's
        connection when the operator configured it, billed to credits. Any model is reached as{' '}
        <code>&lt;provider&gt;/&lt;model&gt;</code>; the models listed here are also reached by their names alone.
      </p>
      <ErrorNote error={error} />
      {!providers && !error && <p class="muted">Loading…</p>}
      {providers && (
        <>
          <h2>Ready to call</h2>
          {ready.length === 0 ? (
            <p class="muted">None: the operator configured no provider, and you have no provider keys.</p>
          ) : (
            <div class="provider-cards">{ready.map(card)}</div>
          )}
          <h2>Not set up</h2>
          <div class="provider-cards">{others.map(card)}</div>
        </>
      )}
    </section>
  )
}

function ProviderCard({
  provider,
  keys,
  canManageKeys,
  canTest,
}: {
  provider: GatewayProvider
  /** The organisation's keys of this provider, for those who may list them. */
  keys: ProviderKey[]
  canManageKeys: boolean
  canTest: boolean
}) {
  return (
    <article class="card provider" aria-label={`Provider ${provider.label}`} data-provider={provider.name}>
      <div class="provider-head">
        <h3>{provider.label}</h3>
        <code>{provider.name}</code>
      </div>
      <p class="muted readiness">{readiness(provider)}</p>
      <dl class="facts">
        <div>
          <dt>Operator</dt>
          <dd data-operator={provider.operator.configured ? 'configured' : 'not-configured'}>
            {provider.operator.configured ? 'configured' : 'not configured'}
          </dd>
        </div>
        <div>
          <dt>Your keys</dt>
          <dd data-keys={provider.keys}>
            {plural(provider.keys, 'key', 'keys')}
            {canManageKeys && (
              <>
                {' '}
                <a href="#/provider-keys" aria-label={`Provider keys (${provider.label})`}>
                  {provider.keys === 0 ? 'add one' : 'manage'}
                </a>
              </>
            )}
          </dd>
        </div>
      </dl>
      <Models provider={provider} />
      {canTest && <TestConnection provider={provider} keys={keys} />}
    </article>
  )
}

/**
 * The provider's catalogued models, folded away until asked for: some providers have dozens. Azure's
 * are OpenAI's, served under whatever deployment names their owner chose, which a key's aliases map.
 */
function Models({ provider }: { provider: GatewayProvider }) {
  if (provider.models.length === 0)
    return (
      <p class="muted models-none">
        No catalogued models: name one as <code>{provider.name}/&lt;model&gt;</code>.
      </p>
    )
  return (
    <>
      {provider.kind === 'azure' && (
        <p class="muted models-note">
          Called by deployment: <code>{provider.name}/&lt;deployment&gt;</code>, or a model below that a key's aliases map to one.
        </p>
      )}
      <ModelTable provider={provider} />
    </>
  )
}

/** Where a model's price comes from, as the organisation's calls are billed. */
const priceFrom = (source: string | null) => (source === null ? '-' : source.startsWith('override:') ? 'yours' : 'table')

function ModelTable({ provider }: { provider: GatewayProvider }) {
  const own = provider.models.filter((model: Model) => model.priceSource?.startsWith('override:')).length
  return (
    <details class="models">
      <summary>
        {plural(provider.models.length, 'model', 'models')}, with prices{own > 0 ? ` (${own} of your own)` : ''}
      </summary>
      <table aria-label={`Models of ${provider.label}`}>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Max output</th>
            <th scope="col">Input / 1M</th>
            <th scope="col">Output / 1M</th>
            <th scope="col">Price from</th>
          </tr>
        </thead>
        <tbody>
          {provider.models.map((model: Model) => (
            <tr key={model.id}>
              <td>
                <code>{model.id}</code>
              </td>
              <td>{model.maxOutputTokens === 0 ? '-' : formatCount(model.maxOutputTokens)}</td>
              <td>{price(model.inputUsdPerMillion)}</td>
              <td>{price(model.outputUsdPerMillion)}</td>
              <td>{priceFrom(model.priceSource)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  )
}

/**
 * One small call (256 output tokens at most) to the provider through the organisation's own path, on a key of
 * its own when one is chosen; it is logged and billed as any call is. What came back is shown as it
 * came: the answer, or the provider's error word for word.
 */
function TestConnection({ provider, keys }: { provider: GatewayProvider; keys: ProviderKey[] }) {
  const [model, setModel] = useState(provider.models[0]?.id ?? '')
  const [keyId, setKeyId] = useState('')
  const [result, setResult] = useState<TestResult>()
  const [testing, setTesting] = useState(false)
  const { error, run } = useAction()
  const listId = `models-of-${provider.name}`

  const test = async (event: Event) => {
    event.preventDefault()
    setResult(undefined)
    setTesting(true)
    const body: GatewayTestInput = { model: testModel(provider, model.trim()), ...(keyId ? { providerKeyId: keyId } : {}) }
    await run(async () => setResult(await api<TestResult>('POST', '/v1/test/gateway-request', body)))
    setTesting(false)
  }

  return (
    <div class="test-connection">
      <form class="test-form" onSubmit={test} aria-label={`Test connection to ${provider.label}`}>
        <label class="model">
          Model
          <input
            list={listId}
            required
            maxLength={200}
            value={model}
            placeholder={provider.models.length === 0 ? 'a model of theirs' : 'pick or type one'}
            onInput={(event) => setModel(fieldValue(event))}
          />
          <datalist id={listId}>
            {provider.models.map((candidate) => (
              <option key={candidate.id} value={candidate.id} />
            ))}
          </datalist>
        </label>
        {keys.length > 0 && (
          <label class="key">
            Key
            <select value={keyId} onChange={(event) => setKeyId(fieldValue(event))}>
              <option value="">any, by weight</option>
              {keys.map((key) => (
                <option key={key.id} value={key.id}>
                  {key.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" disabled={testing}>
          {testing ? 'Testing…' : 'Test connection'}
        </button>
      </form>
      <ErrorNote error={error} />
      {result && <TestOutcome result={result} />}
    </div>
  )
}

function TestOutcome({ result }: { result: TestResult }) {
  const facts = [
    `status ${result.httpStatus}`,
    formatMs(result.latencyMs),
    result.cost === null ? 'no cost' : formatUsd(result.cost),
    `${result.provider}/${result.model}`,
  ]
  return (
    <div class={`outcome ${result.ok ? 'ok' : 'failed'}`} role="status" data-outcome={result.ok ? 'ok' : 'failed'}>
      <p class="verdict">
        <strong>{result.ok ? 'Answered' : 'Failed'}</strong>
        {facts.map((fact) => (
          <span key={fact} class="fact">
            {fact}
          </span>
        ))}
      </p>
      {result.ok ? (
        <blockquote data-answer>{result.answer ?? 'no text in the answer'}</blockquote>
      ) : (
        <pre data-error>{result.error}</pre>
      )}
      {result.requestId && (
        <p class="muted request-id">
          request <code>{result.requestId}</code>
        </p>
      )}
    </div>
  )
}
