import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy } from '../src/egress/policy'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { BOT_TOKEN, type FakeServices, STRIPE_KEY, startFakeServices } from './support/fake-services'
import { createHarness, type Harness, type Org } from './support/harness'

let services: FakeServices
let fake: FakeProvider
let h: Harness
let org: Org
beforeAll(async () => {
  services = startFakeServices()
  fake = await startFakeProvider()
  h = await createHarness({
    integrations: services.urls,
    providers: providersAt(fake),
    delivery: { schedule: [0.05, 0.05, 0.05], pollMs: 20 },
  })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 10)
})
afterAll(async () => {
  services.stop()
  await fake.close()
  await h.close()
})

const data = async <T>(response: Response): Promise<T> => ((await response.json()) as { data: T }).data
const messageOf = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message
type View = { id: string; type: string; active: boolean; settings: Record<string, string>; secrets: string[] }

describe('integrations', () => {
  test('Slack: one per organisation, the token masked on every read; its channels listed with the token', async () => {
    const created = await h.request('POST', '/v1/integration', {
      token: org.ownerSession,
      body: { type: 'slack', settings: { botToken: BOT_TOKEN, channel: '#alerts' } },
    })
    expect(created.status).toBe(201)
    const slackView = await data<View>(created)
    expect(slackView).toMatchObject({ type: 'slack', active: true, secrets: ['botToken'], settings: { channel: '#alerts' } })
    expect(slackView.settings.botToken).toBe('xoxb…mnop')
    for (const path of [
      '/v1/integration',
      `/v1/integration/${slackView.id}`,
      '/v1/integration/type/slack',
      '/v1/integration/slack/settings',
    ]) {
      const read = await h.request('GET', path, { token: org.ownerSession })
      expect(read.status).toBe(200)
      expect(await read.text()).not.toContain(BOT_TOKEN)
    }
    const audit = await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: org.ownerSession })
    expect(await audit.text()).not.toContain(BOT_TOKEN.slice(5))
    const again = await h.request('POST', '/v1/integration', {
      token: org.ownerSession,
      body: { type: 'slack', settings: { botToken: BOT_TOKEN } },
    })
    expect(again.status).toBe(409)
    expect(await data<unknown>(await h.request('GET', '/v1/integration/slack/channels', { token: org.ownerSession }))).toEqual([
      { id: 'C1', name: 'alerts', private: false },
      { id: 'C2', name: 'finance', private: true },
    ])
    // A bad change is 400, and the saved settings stay as they were.
    const bad = await h.request('POST', `/v1/integration/${slackView.id}`, {
      token: org.ownerSession,
      body: { settings: { botToken: 'not-a-token', channel: '#changed' } },
    })
    expect(bad.status).toBe(400)
    expect(await data<View>(await h.request('GET', `/v1/integration/${slackView.id}`, { token: org.ownerSession }))).toEqual(
      slackView,
    )
    // A token Slack refuses: 502, with Slack's reason.
    await h.request('POST', `/v1/integration/${slackView.id}`, {
      token: org.ownerSession,
      body: { settings: { botToken: 'xoxb-0000000000-refusedrefused' } },
    })
    const refused = await h.request('GET', '/v1/integration/slack/channels', { token: org.ownerSession })
    expect(refused.status).toBe(502)
    expect(await messageOf(refused)).toBe('Slack refused: invalid_auth')
    // Switching it off keeps its settings; clearing the channel removes it.
    const changed = await data<View>(
      await h.request('POST', `/v1/integration/${slackView.id}`, {
        token: org.ownerSession,
        body: { active: false, settings: { channel: '' } },
      }),
    )
    expect(changed).toMatchObject({
      active: false,
      secrets: ['botToken'],
      settings: { botToken: 'xoxb…used' },
    })
    expect(changed.settings.channel).toBeUndefined()
  })

  test('bad settings are 400 with the reason, and nothing is stored', async () => {
    const fresh = await h.org('growth')
    for (const [body, message] of [
      [{ type: 'slack', settings: { channel: '#x' } }, 'needs webhookUrl or botToken'],
      [{ type: 'slack', settings: { botToken: 'not-a-token' } }, 'botToken must be a Slack token'],
      [{ type: 'slack', settings: { webhookUrl: 'http://hooks.slack.com/x' } }, 'webhookUrl must be a Slack incoming-webhook'],
      [{ type: 'slack', settings: { webhookUrl: 'https://10.0.0.1/x' } }, 'private'],
      [
        { type: 'stripe', settings: { secretKey: STRIPE_KEY, colour: 'red' } },
        'stripe settings take only secretKey, meterEventName',
      ],
      [{ type: 'teams', settings: {} }, 'type must be slack or stripe'],
    ] as const) {
      const response = await h.request('POST', '/v1/integration', { token: fresh.ownerSession, body })
      expect(response.status).toBe(400)
      expect(await messageOf(response)).toContain(message)
    }
    expect(await data<unknown[]>(await h.request('GET', '/v1/integration', { token: fresh.ownerSession }))).toEqual([])
    expect((await h.request('GET', '/v1/integration/type/stripe', { token: fresh.ownerSession })).status).toBe(404)
  })

  test('Stripe: a test meter event goes through the stripe package to the configured API, the key never shown', async () => {
    const created = await data<View>(
      await h.request('POST', '/v1/integration', {
        token: org.ownerSession,
        body: { type: 'stripe', settings: { secretKey: STRIPE_KEY, meterEventName: 'llm_tokens' } },
      }),
    )
    expect(created.settings.secretKey).toBe('sk_t…StUv')
    const sent = await h.request('POST', `/v1/integration/${created.id}/stripe/test-meter-event`, {
      token: org.ownerSession,
      body: { customerId: 'cus_Test123', value: 42 },
    })
    expect(sent.status).toBe(200)
    const result = await data<{ ok: boolean; identifier: string; eventName: string }>(sent)
    expect(result).toMatchObject({ ok: true, eventName: 'llm_tokens' })
    expect(services.meterEvents.at(-1)).toMatchObject({
      event_name: 'llm_tokens',
      identifier: result.identifier,
      'payload[stripe_customer_id]': 'cus_Test123',
      'payload[value]': '42',
    })
    // A key Stripe refuses: 502 with Stripe's message, which masks the key.
    await h.request('POST', `/v1/integration/${created.id}`, {
      token: org.ownerSession,
      body: { settings: { secretKey: 'sk_test_refusedrefusedrefused' } },
    })
    const refused = await h.request('POST', `/v1/integration/${created.id}/stripe/test-meter-event`, {
      token: org.ownerSession,
      body: { customerId: 'cus_Test123' },
    })
    expect(refused.status).toBe(502)
    const message = await messageOf(refused)
    expect(message).toStartWith('Stripe refused: Invalid API Key provided')
    expect(message).not.toContain('refusedrefused')
  })

  test('a Member is refused; another organisation finds nothing; with egress off nothing is added', async () => {
    const [slackView] = await data<View[]>(await h.request('GET', '/v1/integration', { token: org.ownerSession }))
    const member = await h.member(org.orgId, 'member')
    expect((await h.request('GET', '/v1/integration', { token: member.sessionToken })).status).toBe(403)
    const other = await h.org('growth')
    expect((await h.request('GET', `/v1/integration/${slackView?.id}`, { token: other.ownerSession })).status).toBe(404)
    expect(
      (await h.request('POST', `/v1/integration/${slackView?.id}`, { token: other.ownerSession, body: { active: true } })).status,
    ).toBe(404)
    expect((await h.request('GET', '/v1/integration/slack/channels', { token: other.ownerSession })).status).toBe(404)

    const offline = await createHarness({ egress: new EgressPolicy({ enabled: false }) })
    const offlineOrg = await offline.org('growth')
    const refused = await offline.request('POST', '/v1/integration', {
      token: offlineOrg.ownerSession,
      body: { type: 'stripe', settings: { secretKey: STRIPE_KEY } },
    })
    expect(refused.status).toBe(409)
    await offline.close()
  })

  test('metering: a call naming a Stripe customer reports its tokens once, retried while Stripe refuses, keyed by the request', async () => {
    const [stripeView] = (await data<View[]>(await h.request('GET', '/v1/integration', { token: org.ownerSession }))).filter(
      (integration) => integration.type === 'stripe',
    )
    // The key was left refused by an earlier test: the first attempts fail.
    const call = async (customer: string) => {
      const response = await h.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        headers: { 'Gw-Stripe-Customer-Id': customer },
        body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'meter me' }] },
      })
      expect(response.status).toBe(200)
      await response.text()
      return response.headers.get('gw-id') as string
    }
    const requestId = await call('cus_Meter1')
    await call('not a customer id')
    await h.requestLog.flush()
    const before = services.meterEvents.length
    await h.services.deliverer.tick()
    expect(services.meterEvents.length).toBe(before)
    await h.request('POST', `/v1/integration/${stripeView?.id}`, {
      token: org.ownerSession,
      body: { settings: { secretKey: STRIPE_KEY } },
    })
    const until = Date.now() + 5_000
    while (services.meterEvents.length === before && Date.now() < until) {
      await Bun.sleep(30)
      await h.services.deliverer.tick()
    }
    for (let i = 0; i < 3; i++) await h.services.deliverer.tick()
    expect(services.meterEvents.slice(before)).toEqual([
      expect.objectContaining({
        event_name: 'llm_tokens',
        identifier: `gw-${requestId}`,
        'payload[stripe_customer_id]': 'cus_Meter1',
        'payload[value]': '1500',
      }),
    ])
  })
})
