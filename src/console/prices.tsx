import { useState } from 'preact/hooks'
import type { Imported, Price as PriceView } from '../modules/model-prices/model'
import { api } from './api'
import { formatCount, formatUsd, formatWhen } from './format'
import { ErrorNote, useAction, useList } from './ui'

type Price = typeof PriceView.static

const PROVIDERS = ['openai', 'anthropic'] as const
/** The optional fields of a price: an empty input leaves the field out, so the built-in row's value or the input rate applies. */
const OPTIONAL_USD = ['cacheReadPerMillion', 'cacheWritePerMillion', 'perRequest'] as const

/** A price as it was set, every digit of it: $0.075 per million is not $0.08. */
const asSet = (value: number) => formatUsd(value, { exact: true })
const asSetOrDash = (value: number | null) => (value === null ? '-' : asSet(value))

/**
 * The time a datetime-local input holds (the reader's own clock, no zone) as the instant the API takes,
 * which needs its zone; empty is now, the API's default.
 */
function instantOf(local: string): string | undefined {
  if (!local) return undefined
  const at = new Date(local)
  return Number.isNaN(at.getTime()) ? local : at.toISOString()
}

/** The organisation's prices for models over gw's built-in table; set by those who hold spend_controls.write. */
export function Prices({ canWrite }: { canWrite: boolean }) {
  const { items: prices, error, change } = useList<Price>('/v1/model-prices')
  // The forms keep their own failures beside them; after a change they only read the list again.
  const refresh = () => change(async () => undefined)

  const remove = (price: Price) =>
    change(() =>
      api(
        'DELETE',
        `/v1/model-prices?${new URLSearchParams({ provider: price.provider, model: price.model, effectiveFrom: price.effectiveFrom })}`,
      ),
    )

  return (
    <section aria-labelledby="prices">
      <h1 id="prices">Model prices</h1>
      <p class="muted">
        What the organization pays per million tokens, where it differs from gw's built-in prices: costs, budgets and credits
        follow these from the moment each takes effect.
      </p>
      <ErrorNote error={error} />
      {!prices && !error && <p class="muted">Loading…</p>}
      {prices && prices.length === 0 && <p class="muted">No overrides: gw's built-in prices apply.</p>}
      {prices && prices.length > 0 && (
        <table aria-label="Price overrides">
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Model</th>
              <th scope="col">Input / M</th>
              <th scope="col">Output / M</th>
              <th scope="col">Cache read / M</th>
              <th scope="col">Cache write / M</th>
              <th scope="col">Per call</th>
              <th scope="col">Max output</th>
              <th scope="col">Effective from</th>
              <th scope="col">In force</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {prices.map((price) => (
              <tr key={price.id}>
                <td>{price.provider}</td>
                <td>
                  <code>{price.model}</code>
                </td>
                <td>{asSet(price.inputPerMillion)}</td>
                <td>{asSet(price.outputPerMillion)}</td>
                <td>{asSetOrDash(price.cacheReadPerMillion)}</td>
                <td>{asSetOrDash(price.cacheWritePerMillion)}</td>
                <td>{asSetOrDash(price.perRequest)}</td>
                <td>{price.maxOutputTokens === null ? 'built-in' : formatCount(price.maxOutputTokens)}</td>
                <td>{formatWhen(price.effectiveFrom)}</td>
                <td data-in-force>{price.inForce ? 'yes' : 'no'}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => remove(price)}
                      aria-label={`Delete the price of ${price.provider} ${price.model} from ${formatWhen(price.effectiveFrom)}`}
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
      {canWrite && (
        <div class="tops">
          <PriceForm onSaved={refresh} />
          <ImportForm onImported={refresh} />
        </div>
      )}
    </section>
  )
}

/** One price, from a time on; the same model from the same time is replaced. */
function PriceForm({ onSaved }: { onSaved(): void }) {
  const { error, run } = useAction()
  const set = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const text = (name: string) => String(data.get(name) ?? '').trim()
    const optional: Record<string, number> = {}
    for (const name of [...OPTIONAL_USD, 'maxOutputTokens']) if (text(name)) optional[name] = Number(text(name))
    const effectiveFrom = instantOf(text('effectiveFrom'))
    const saved = await run(() =>
      api('PUT', '/v1/model-prices', {
        provider: text('provider'),
        model: text('model'),
        inputPerMillion: Number(text('inputPerMillion')),
        outputPerMillion: Number(text('outputPerMillion')),
        ...optional,
        ...(effectiveFrom ? { effectiveFrom } : {}),
      }),
    )
    if (!saved) return
    form.reset()
    onSaved()
  }
  return (
    <form class="setting" onSubmit={set} aria-label="Set a price">
      <fieldset>
        <legend>Set a price</legend>
        <label>
          Provider
          <select name="provider">
            {PROVIDERS.map((provider) => (
              <option key={provider} value={provider}>
                {provider}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <input name="model" required maxLength={200} placeholder="gpt-4o" />
        </label>
        <label>
          Input, USD per million tokens
          <input name="inputPerMillion" type="number" min={0} step="any" required />
        </label>
        <label>
          Output, USD per million tokens
          <input name="outputPerMillion" type="number" min={0} step="any" required />
        </label>
        <label>
          Cache read, USD per million (empty: as input)
          <input name="cacheReadPerMillion" type="number" min={0} step="any" />
        </label>
        <label>
          Cache write, USD per million (empty: as input)
          <input name="cacheWritePerMillion" type="number" min={0} step="any" />
        </label>
        <label>
          Fee per call, USD
          <input name="perRequest" type="number" min={0} step="any" />
        </label>
        <label>
          Max output tokens (required for a model gw does not know)
          <input name="maxOutputTokens" type="number" min={0} step={1} />
        </label>
        <label>
          Effective from (your own time; empty: now)
          <input name="effectiveFrom" type="datetime-local" />
        </label>
        <button type="submit">Set price</button>
        <ErrorNote error={error} />
      </fieldset>
    </form>
  )
}

type Format = 'csv' | 'json'

/** JSON text as the import's rows: an array of prices, or an object holding one as `rows`. */
function jsonRows(text: string): unknown[] | string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (failure) {
    return `the JSON does not parse: ${(failure as Error).message}`
  }
  if (Array.isArray(parsed)) return parsed
  const rows = (parsed as { rows?: unknown } | null)?.rows
  return Array.isArray(rows) ? rows : 'the JSON must be an array of prices'
}

/**
 * Many prices at once, pasted or from a file. The API checks every row before it writes any, and its
 * refusal names each bad row and field: that message is shown as it comes.
 */
function ImportForm({ onImported }: { onImported(): void }) {
  const [format, setFormat] = useState<Format>('csv')
  const [text, setText] = useState('')
  const [done, setDone] = useState<string>()
  const { error, setError, run } = useAction()

  const choose = (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0]
    if (!file) return
    setFormat(file.name.toLowerCase().endsWith('.json') ? 'json' : 'csv')
    run(async () => setText(await file.text()))
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const mode = String(new FormData(form).get('mode'))
    setDone(undefined)
    let body: Record<string, unknown>
    if (format === 'json') {
      const rows = jsonRows(text)
      if (typeof rows === 'string') {
        setError(rows)
        return
      }
      body = { format, mode, rows }
    } else body = { format, mode, csv: text }
    const imported = await run(async () => {
      const answer = await api<typeof Imported.static>('PUT', '/v1/model-prices/import', body)
      setDone(
        `Imported ${formatCount(answer.imported)} ${answer.imported === 1 ? 'price' : 'prices'}` +
          (mode === 'replace' ? `, ${formatCount(answer.replaced)} removed` : ''),
      )
    })
    if (!imported) return
    // The file input and the mode go back to their start, with the text.
    form.reset()
    setText('')
    onImported()
  }
  return (
    <form class="setting" onSubmit={submit} aria-label="Import prices">
      <fieldset>
        <legend>Import prices</legend>
        <p class="muted">
          CSV: a header line naming the fields (provider, model, inputPerMillion, outputPerMillion, and any of the others), then a
          line per price. JSON: an array of prices.
        </p>
        <label>
          Format
          <select
            name="format"
            value={format}
            onChange={(event) => setFormat((event.currentTarget as HTMLSelectElement).value as Format)}
          >
            <option value="csv">CSV</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <label>
          Prices
          <textarea
            name="text"
            rows={6}
            required
            value={text}
            onInput={(event) => setText((event.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <label>
          Or read them from a file
          <input type="file" accept=".csv,.json,text/csv,application/json" onChange={choose} />
        </label>
        <fieldset>
          <legend>Mode</legend>
          <label class="check">
            <input type="radio" name="mode" value="merge" defaultChecked /> merge into the current prices
          </label>
          <label class="check">
            <input type="radio" name="mode" value="replace" /> replace them all
          </label>
        </fieldset>
        <button type="submit">Import</button>
        <ErrorNote error={error} />
        {done && <p role="status">{done}</p>}
      </fieldset>
    </form>
  )
}
