import { useState } from 'preact/hooks'
import type { CreatedWebhook, DeliveryView, TestResult as TestResultView, WebhookView } from '../modules/webhooks/model'
import { api } from './api'
import { formatCount, formatMs, formatWhen } from './format'
import { ErrorNote, type PageProps, ShownOnce, useAction, useList } from './ui'

type Webhook = typeof WebhookView.static
type LastDelivery = Webhook['lastDelivery']
type Delivery = typeof DeliveryView.static
type TestResult = typeof TestResultView.static

const EVENTS = ['request.completed', 'budget.threshold_crossed', 'budget.breached'] as const

/** `key=value` lines into the properties a request must carry; a line without `=` is refused with the reason. */
function parseFilters(text: string): Record<string, string> | string {
  const filters: Record<string, string> = {}
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const at = line.indexOf('=')
    if (at <= 0) return `"${line}" is not name=value`
    filters[line.slice(0, at).trim()] = line.slice(at + 1).trim()
  }
  return filters
}

const lastText = (last: LastDelivery) =>
  last === null
    ? 'nothing sent yet'
    : `${last.status}${last.httpStatus === null ? '' : ` (${last.httpStatus})`} · ${new Date(last.at).toLocaleString()}`

/** Where the organisation's events go: signed deliveries, retried until they arrive, each attempt to be seen. */
export function Webhooks(_: PageProps) {
  const { items: webhooks, error, change } = useList<Webhook>('/v1/webhooks')
  const [issued, setIssued] = useState<{ destination: string; secret: string }>()
  const [formError, setFormError] = useState<string>()

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const filters = parseFilters(String(data.get('filters') ?? ''))
    if (typeof filters === 'string') {
      setFormError(filters)
      return
    }
    setFormError(undefined)
    const created = await change(async () => {
      const answer = await api<typeof CreatedWebhook.static>('POST', '/v1/webhooks', {
        destination: String(data.get('destination')).trim(),
        events: data.getAll('event').map(String),
        sampleRate: Number(data.get('sampleRate')),
        propertyFilters: filters,
        includeData: data.get('includeData') === 'on',
      })
      setIssued({ destination: answer.destination, secret: answer.secret })
    })
    if (created) form.reset()
  }

  return (
    <section aria-labelledby="webhooks">
      <h1 id="webhooks">Webhooks</h1>
      <p class="muted">
        Events are POSTed as JSON and signed by the Standard Webhooks specification (webhook-id, webhook-timestamp,
        webhook-signature): verify them with its library for your language. A failed delivery is tried again for about a day.
      </p>
      <ErrorNote error={error ?? formError} />
      {issued && (
        <ShownOnce secret={issued.secret} done="I have saved it" onDone={() => setIssued(undefined)}>
          The signing secret of <strong>{issued.destination}</strong> is shown this once: your receiver verifies every delivery
          with it.
        </ShownOnce>
      )}
      <form class="setting" onSubmit={create} aria-label="New webhook">
        <fieldset>
          <legend>New webhook</legend>
          <label>
            Destination
            <input name="destination" type="url" required maxLength={2000} placeholder="https://hooks.example.com/gw" />
          </label>
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map((name) => (
              <label class="check" key={name}>
                <input type="checkbox" name="event" value={name} defaultChecked={name === 'request.completed'} /> {name}
              </label>
            ))}
          </fieldset>
          <label>
            Sample rate (% of events sent)
            <input name="sampleRate" type="number" min={0} max={100} step={1} defaultValue="100" required />
          </label>
          <label>
            Only requests with these properties (one name=value a line)
            <textarea name="filters" rows={2} />
          </label>
          <label class="check">
            <input type="checkbox" name="includeData" /> Include the request and response bodies
          </label>
          <button type="submit">Create webhook</button>
        </fieldset>
      </form>
      {!webhooks && !error && <p class="muted">Loading…</p>}
      {webhooks && webhooks.length === 0 && <p class="muted">No webhooks yet.</p>}
      {webhooks?.map((webhook) => (
        <WebhookCard
          key={webhook.id}
          webhook={webhook}
          onDelete={() => change(() => api('DELETE', `/v1/webhooks/${encodeURIComponent(webhook.id)}`))}
          onSent={() => change(async () => undefined)}
        />
      ))}
    </section>
  )
}

/** One webhook; `onSent` reads the list again, so its last delivery shows what a test just did. */
function WebhookCard({ webhook, onDelete, onSent }: { webhook: Webhook; onDelete(): void; onSent(): void }) {
  const [tested, setTested] = useState<TestResult>()
  const [deliveries, setDeliveries] = useState<Delivery[]>()
  const { error, run } = useAction()
  const path = `/v1/webhooks/${encodeURIComponent(webhook.id)}`
  const loadDeliveries = () => run(async () => setDeliveries(await api<Delivery[]>('GET', `${path}/deliveries`)))
  const test = () =>
    run(async () => {
      setTested(await api<TestResult>('POST', `${path}/test`))
      onSent()
      if (deliveries) await loadDeliveries()
    })
  const filters = Object.entries(webhook.propertyFilters)
  const facts: Array<[string, string]> = [
    ['Events', webhook.events.join(', ')],
    ['Sample rate', `${webhook.sampleRate}%`],
    ['Properties required', filters.length === 0 ? 'none' : filters.map(([k, v]) => `${k}=${v}`).join(', ')],
    ['Bodies', webhook.includeData ? 'included' : 'not included'],
    ['Signing secret', webhook.secretPrefix],
    ['State', webhook.disabledAt ? `disabled ${formatWhen(webhook.disabledAt)} (the destination answered 410 Gone)` : 'active'],
    ['Last delivery', lastText(webhook.lastDelivery)],
  ]
  if (webhook.droppedEvents > 0) facts.push(['Dropped while the destination was down', formatCount(webhook.droppedEvents)])
  return (
    <article class="card webhook" aria-label={webhook.destination}>
      <h2 class="destination">
        <code>{webhook.destination}</code>
      </h2>
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <div class="row-actions">
        <button type="button" class="quiet" onClick={test} aria-label={`Send a test to ${webhook.destination}`}>
          Send a test
        </button>
        <button type="button" class="quiet" onClick={loadDeliveries} aria-label={`Deliveries of ${webhook.destination}`}>
          {deliveries ? 'Refresh deliveries' : 'Show deliveries'}
        </button>
        <button type="button" class="danger" onClick={onDelete} aria-label={`Delete ${webhook.destination}`}>
          Delete
        </button>
      </div>
      <ErrorNote error={error} />
      {tested && (
        <p role="status" data-test-result>
          {tested.ok
            ? `Delivered: ${tested.httpStatus} in ${formatMs(tested.latencyMs)}`
            : `Not delivered: ${tested.error ?? 'no answer'}`}
        </p>
      )}
      {deliveries && deliveries.length === 0 && <p class="muted">No deliveries yet.</p>}
      {deliveries && deliveries.length > 0 && (
        <table aria-label={`Deliveries of ${webhook.destination}`}>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Made</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.event}</td>
                <td data-delivery-status>{delivery.status}</td>
                <td>{delivery.attempts}</td>
                <td>{delivery.lastError ?? (delivery.lastHttpStatus === null ? '-' : String(delivery.lastHttpStatus))}</td>
                <td>{formatWhen(delivery.nextAttemptAt)}</td>
                <td>{formatWhen(delivery.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  )
}
