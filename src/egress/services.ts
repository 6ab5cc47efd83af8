import type Stripe from 'stripe'

/**
 * The other services integrations talk to, at the addresses the operator configured (GW_SLACK_API_URL,
 * GW_STRIPE_API_URL). Their answers' messages are passed on; the tokens and keys never are.
 */
export interface ServiceUrls {
  slackApiUrl: string
  stripeApiUrl: string
}

const TIMEOUT_MS = 10_000

export class ServiceFailure extends Error {}

/** The channels a Slack bot token can see, through Slack's Web API (`conversations.list`). */
export async function slackChannels(
  apiUrl: string,
  botToken: string,
): Promise<Array<{ id: string; name: string; private: boolean }>> {
  let response: Response
  try {
    response = await fetch(`${apiUrl}/conversations.list?types=public_channel,private_channel&exclude_archived=true&limit=200`, {
      headers: { authorization: `Bearer ${botToken}` },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (error) {
    throw new ServiceFailure(`Slack could not be reached: ${(error as Error).message}`)
  }
  const answer = (await response.json().catch(() => undefined)) as
    | { ok: boolean; error?: string; channels?: Array<{ id: string; name: string; is_private?: boolean }> }
    | undefined
  if (!answer?.ok) throw new ServiceFailure(`Slack refused: ${answer?.error ?? `status ${response.status}`}`)
  return (answer.channels ?? []).map((channel) => ({ id: channel.id, name: channel.name, private: channel.is_private === true }))
}

/** Posts a message to a channel through Slack's Web API (`chat.postMessage`) with a bot token. */
export async function slackPost(apiUrl: string, botToken: string, channel: string, text: string): Promise<void> {
  let response: Response
  try {
    response = await fetch(`${apiUrl}/chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${botToken}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel, text }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (error) {
    throw new ServiceFailure(`Slack could not be reached: ${(error as Error).message}`)
  }
  const answer = (await response.json().catch(() => undefined)) as { ok: boolean; error?: string } | undefined
  if (!answer?.ok) throw new ServiceFailure(`Slack refused: ${answer?.error ?? `status ${response.status}`}`)
}

/**
 * A Stripe client on the configured address, with no retries of its own (the outbox retries) and no
 * telemetry. Stripe's library is loaded with the first meter event: evaluating it took a few
 * milliseconds of every start-up (bench/results/2026-11-27-cold-start.md).
 */
async function stripeClient(apiUrl: string, secretKey: string): Promise<Stripe> {
  const { default: Stripe } = await import('stripe')
  const url = new URL(apiUrl)
  return new Stripe(secretKey, {
    host: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    protocol: url.protocol === 'http:' ? 'http' : 'https',
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 0,
    telemetry: false,
    timeout: TIMEOUT_MS,
  })
}

/**
 * One meter event: `value` units of usage for a customer, under `identifier`, which Stripe keeps
 * unique, so an event sent twice is counted once.
 */
export async function stripeMeterEvent(
  apiUrl: string,
  secretKey: string,
  event: { eventName: string; customerId: string; value: number; identifier: string; at: Date },
): Promise<{ identifier: string }> {
  try {
    const stripe = await stripeClient(apiUrl, secretKey)
    const created = await stripe.billing.meterEvents.create({
      event_name: event.eventName,
      identifier: event.identifier,
      timestamp: Math.floor(event.at.getTime() / 1000),
      payload: { stripe_customer_id: event.customerId, value: String(event.value) },
    })
    return { identifier: created.identifier }
  } catch (error) {
    throw new ServiceFailure(`Stripe refused: ${(error as Error).message}`)
  }
}
