import { useState } from 'preact/hooks'
import type { IntegrationView, MeterEventResult, SlackChannel } from '../modules/integrations/model'
import { api } from './api'
import { ErrorNote, type PageProps, useAction, useList } from './ui'

type Integration = typeof IntegrationView.static

/** Each type's settings as the form asks for them; secret ones are typed as passwords and never shown back. */
const TYPES = {
  slack: {
    title: 'Slack',
    about: 'A Slack workspace, through an incoming webhook or a bot token (a bot token also lists its channels).',
    fields: [
      { name: 'webhookUrl', label: 'Incoming webhook URL', secret: true },
      { name: 'botToken', label: 'Bot token (xoxb-…)', secret: true },
      { name: 'channel', label: 'Channel', secret: false },
    ],
  },
  stripe: {
    title: 'Stripe',
    about: 'Usage metering: calls that carry Gw-Stripe-Customer-Id report their tokens to a Stripe meter.',
    fields: [
      { name: 'secretKey', label: 'Secret key (sk_… or rk_…)', secret: true },
      { name: 'meterEventName', label: 'Meter event name (gw_tokens by default)', secret: false },
    ],
  },
} as const
type IntegrationType = keyof typeof TYPES

/** The settings a form was filled with: blank fields are left as saved. */
const filled = (form: HTMLFormElement): Record<string, string> =>
  Object.fromEntries(
    [...new FormData(form).entries()].map(([name, value]) => [name, String(value).trim()]).filter(([, value]) => value !== ''),
  )

/** Slack and Stripe, one of each: added, changed, switched off, and tried. */
export function Integrations(_: PageProps) {
  const { items, error, change } = useList<Integration>('/v1/integration')
  return (
    <section aria-labelledby="integrations">
      <h1 id="integrations">Integrations</h1>
      <ErrorNote error={error} />
      {!items && !error && <p class="muted">Loading…</p>}
      {items &&
        (Object.keys(TYPES) as IntegrationType[]).map((type) => (
          <IntegrationCard key={type} type={type} integration={items.find((item) => item.type === type)} change={change} />
        ))}
    </section>
  )
}

function IntegrationCard({
  type,
  integration,
  change,
}: {
  type: IntegrationType
  integration: Integration | undefined
  change(action: () => Promise<unknown>): Promise<boolean>
}) {
  const kind = TYPES[type]
  const [saved, setSaved] = useState<string>()
  const save = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const settings = filled(form)
    setSaved(undefined)
    const done = await change(() =>
      integration
        ? api('POST', `/v1/integration/${encodeURIComponent(integration.id)}`, { settings })
        : api('POST', '/v1/integration', { type, settings }),
    )
    if (done) {
      form.reset()
      setSaved(`${kind.title} saved`)
    }
  }
  const switchTo = (active: boolean) =>
    integration && change(() => api('POST', `/v1/integration/${encodeURIComponent(integration.id)}`, { active }))
  return (
    <article class="card integration" aria-label={kind.title}>
      <h2 class="type">{kind.title}</h2>
      <p class="muted">{kind.about}</p>
      {integration && (
        <dl class="facts">
          <div>
            <dt>State</dt>
            <dd>{integration.active ? 'on' : 'off'}</dd>
          </div>
          {kind.fields.map((field) => (
            <div key={field.name}>
              <dt>{field.label}</dt>
              <dd data-setting={field.name}>{integration.settings[field.name] ?? '-'}</dd>
            </div>
          ))}
        </dl>
      )}
      <form class="inline" onSubmit={save} aria-label={`${kind.title} settings`}>
        {kind.fields.map((field) => {
          const id = `${type}-${field.name}`
          const hint = integration?.settings[field.name] ? 'leave blank to keep' : ''
          return (
            <label key={field.name} htmlFor={id}>
              {field.label}
              {field.secret ? (
                <input id={id} name={field.name} type="password" autocomplete="off" placeholder={hint} />
              ) : (
                <input id={id} name={field.name} autocomplete="off" placeholder={hint} />
              )}
            </label>
          )
        })}
        <button type="submit">{integration ? `Save ${kind.title}` : `Add ${kind.title}`}</button>
      </form>
      {saved && <p role="status">{saved}</p>}
      {integration && (
        <div class="row-actions">
          <button type="button" class="quiet" onClick={() => switchTo(!integration.active)}>
            {integration.active ? `Switch ${kind.title} off` : `Switch ${kind.title} on`}
          </button>
        </div>
      )}
      {integration?.type === 'slack' && <SlackChannels />}
      {integration?.type === 'stripe' && <StripeTest integrationId={integration.id} />}
    </article>
  )
}

function SlackChannels() {
  const [channels, setChannels] = useState<Array<typeof SlackChannel.static>>()
  const { error, run } = useAction()
  return (
    <div>
      <button
        type="button"
        class="quiet"
        onClick={() => run(async () => setChannels(await api('GET', '/v1/integration/slack/channels')))}
      >
        List channels
      </button>
      <ErrorNote error={error} />
      {channels && (
        <ul class="channels" aria-label="Slack channels">
          {channels.map((channel) => (
            <li key={channel.id}>
              #{channel.name}
              {channel.private ? ' (private)' : ''}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

function StripeTest({ integrationId }: { integrationId: string }) {
  const [sent, setSent] = useState<string>()
  const { error, run } = useAction()
  const send = (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    run(async () => {
      const answer = await api<typeof MeterEventResult.static>(
        'POST',
        `/v1/integration/${encodeURIComponent(integrationId)}/stripe/test-meter-event`,
        { customerId: String(data.get('customerId')).trim(), value: Number(data.get('value')) },
      )
      setSent(`Sent to the ${answer.eventName} meter as ${answer.identifier}`)
    })
  }
  return (
    <form class="inline" onSubmit={send} aria-label="Test meter event">
      <label>
        Customer (cus_…)
        <input name="customerId" required />
      </label>
      <label>
        Units
        <input name="value" type="number" min={1} step={1} defaultValue="1" required />
      </label>
      <button type="submit" class="quiet">
        Send a test meter event
      </button>
      <ErrorNote error={error} />
      {sent && <p role="status">{sent}</p>}
    </form>
  )
}
