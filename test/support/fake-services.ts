/**
 * Slack's Web API and Stripe's API as stand-ins on loopback: they check the credentials they are sent,
 * answer as the real ones do for what gw asks, and keep the meter events they took.
 */
export const BOT_TOKEN = 'xoxb-1234567890-abcdefghijklmnop'
export const STRIPE_KEY = 'sk_test_51AbCdEfGhIjKlMnOpQrStUv'

export interface FakeServices {
  urls: { slackApiUrl: string; stripeApiUrl: string }
  meterEvents: Array<Record<string, string>>
  /** What was posted with chat.postMessage: its channel and text. */
  slackMessages: Array<{ channel: string; text: string }>
  stop(): void
}

export function startFakeServices(): FakeServices {
  const meterEvents: Array<Record<string, string>> = []
  const slackMessages: Array<{ channel: string; text: string }> = []
  const slack = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      if (request.headers.get('authorization') !== `Bearer ${BOT_TOKEN}`)
        return Response.json({ ok: false, error: 'invalid_auth' })
      if (url.pathname === '/api/chat.postMessage') {
        const message = (await request.json()) as { channel: string; text: string }
        slackMessages.push({ channel: message.channel, text: message.text })
        return Response.json({ ok: true, channel: message.channel, ts: '1700000000.000100' })
      }
      if (url.pathname !== '/api/conversations.list') return Response.json({ ok: false, error: 'unknown_method' })
      return Response.json({
        ok: true,
        channels: [
          { id: 'C1', name: 'alerts', is_private: false },
          { id: 'C2', name: 'finance', is_private: true },
        ],
      })
    },
  })
  const stripe = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      if (request.method !== 'POST' || url.pathname !== '/v1/billing/meter_events') return new Response('no', { status: 404 })
      if (request.headers.get('authorization') !== `Bearer ${STRIPE_KEY}`)
        return Response.json(
          { error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****wxyz' } },
          { status: 401 },
        )
      const form = Object.fromEntries(new URLSearchParams(await request.text()))
      meterEvents.push(form)
      return Response.json({
        object: 'billing.meter_event',
        created: Math.floor(Date.now() / 1000),
        event_name: form.event_name,
        identifier: form.identifier,
        livemode: false,
        payload: { stripe_customer_id: form['payload[stripe_customer_id]'], value: form['payload[value]'] },
        timestamp: Number(form.timestamp),
      })
    },
  })
  return {
    urls: { slackApiUrl: `http://127.0.0.1:${slack.port}/api`, stripeApiUrl: `http://127.0.0.1:${stripe.port}` },
    meterEvents,
    slackMessages,
    stop() {
      slack.stop(true)
      stripe.stop(true)
    },
  }
}
