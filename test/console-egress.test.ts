import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook as Verifier } from 'standardwebhooks'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  shot,
  startConsoleWorld,
} from './support/console'
import { BOT_TOKEN, type FakeServices, STRIPE_KEY, startFakeServices } from './support/fake-services'

/**
 * The webhooks and integrations pages: a webhook receiver on loopback that the operator allowed,
 * verifying with standardwebhooks, and Slack and Stripe stand-ins.
 */
let world: ConsoleWorld
let services: FakeServices
const received: Array<{ id: string; type: string }> = []
let secret = ''
let answers: number[] = []
let receiver: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  if (!browserAvailable) return
  services = startFakeServices()
  world = await startConsoleWorld({
    egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }),
    delivery: { schedule: [0.1, 0.1], pollMs: 20 },
    integrations: services.urls,
  })
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const status = answers.shift() ?? 200
      if (status !== 200) return new Response('down', { status })
      const body = await request.text()
      new Verifier(secret).verify(body, Object.fromEntries(request.headers))
      received.push({ id: request.headers.get('webhook-id') as string, type: (JSON.parse(body) as { type: string }).type })
      return new Response('ok')
    },
  })
})
afterAll(async () => {
  if (!browserAvailable) return
  receiver.stop(true)
  services.stop()
  await world.close()
})

describe.skipIf(!browserAvailable)('the webhooks page, in chromium', () => {
  test(
    'the Owner creates a webhook (secret once), sends a test, sees a call delivered after retries, and deletes it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Webhooks')
      await page.getByText('No webhooks yet.').waitFor()
      const destination = `http://127.0.0.1:${receiver.port}/hook`
      await page.getByLabel('Destination').fill(destination)
      await page.getByLabel(/Only requests with these properties/).fill('env=prod')
      await page.getByRole('button', { name: 'Create webhook' }).click()
      secret = (await page.locator('[data-secret]').textContent()) ?? ''
      expect(secret).toStartWith('whsec_')
      await page.getByRole('button', { name: 'I have saved it' }).click()
      await page.getByRole('button', { name: `Send a test to ${destination}` }).click()
      await page.locator('[data-test-result]').filter({ hasText: 'Delivered: 200' }).waitFor()
      expect(received.map((r) => r.type)).toEqual(['webhook.test'])
      await page.getByText(/^delivered \(200\)/).waitFor()

      // A call the webhook takes, its first attempt refused: the deliverer tries again.
      answers = [503]
      const call = await fetch(`${world.server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.apiKey}`, 'content-type': 'application/json', 'Gw-Property-Env': 'prod' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(call.status).toBe(200)
      await world.h.requestLog.flush()
      world.h.services.deliverer.start()
      const until = Date.now() + 5_000
      while (received.length < 2 && Date.now() < until) await Bun.sleep(50)
      await world.h.services.deliverer.stop()
      expect(received.map((r) => r.type)).toEqual(['webhook.test', 'request.completed'])
      await page.getByRole('button', { name: `Deliveries of ${destination}` }).click()
      const rows = page.getByRole('table', { name: `Deliveries of ${destination}` }).locator('tbody tr')
      await rows.first().waitFor()
      expect(await rows.count()).toBe(2)
      const completed = rows.filter({ hasText: 'request.completed' })
      expect(await completed.locator('[data-delivery-status]').textContent()).toBe('delivered')
      expect(await completed.locator('td').nth(2).textContent()).toBe('2')
      await shot(page, 'webhooks')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'webhooks-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })

      // The secret is never shown again.
      await page.reload()
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor()
      await page.getByText('active').waitFor()
      expect(await page.content()).not.toContain(secret.slice(6))
      await page.getByRole('button', { name: `Delete ${destination}` }).click()
      await page.getByText('No webhooks yet.').waitFor()
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    "a refused destination shows the API's message; a Member has no webhooks page",
    async () => {
      const { page } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Webhooks')
      await page.getByLabel('Destination').fill('https://10.0.0.7/hook')
      await page.getByRole('button', { name: 'Create webhook' }).click()
      await page.getByRole('alert').filter({ hasText: 'private, loopback or link-local' }).waitFor()
      await page.close()

      const member = await openPage(world.browser)
      await openConsolePage(member.page, world.server.url, 'Overview', MEMBER_EMAIL)
      expect(await member.page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0)
      await member.page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'integrations: the Owner adds Slack (token never shown back) and lists its channels, adds Stripe and sends a test meter event',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Integrations')
      const slack = page.getByRole('article', { name: 'Slack' })
      await slack.getByLabel('Bot token (xoxb-…)').fill(BOT_TOKEN)
      await slack.getByLabel('Channel').fill('#alerts')
      await slack.getByRole('button', { name: 'Add Slack' }).click()
      await slack.locator('[data-setting="botToken"]').filter({ hasText: 'xoxb…mnop' }).waitFor()
      await slack.getByRole('button', { name: 'List channels' }).click()
      await slack.getByRole('list', { name: 'Slack channels' }).getByText('#finance (private)').waitFor()

      const stripe = page.getByRole('article', { name: 'Stripe' })
      await stripe.getByLabel('Secret key (sk_… or rk_…)').fill(STRIPE_KEY)
      await stripe.getByRole('button', { name: 'Add Stripe' }).click()
      await stripe.getByLabel('Customer (cus_…)').waitFor()
      await stripe.getByLabel('Customer (cus_…)').fill('cus_Console1')
      await stripe.getByLabel('Units').fill('7')
      await stripe.getByRole('button', { name: 'Send a test meter event' }).click()
      await stripe.getByRole('status').filter({ hasText: 'Sent to the gw_tokens meter' }).waitFor()
      expect(services.meterEvents.at(-1)).toMatchObject({ 'payload[stripe_customer_id]': 'cus_Console1', 'payload[value]': '7' })
      await stripe.getByRole('button', { name: 'Switch Stripe off' }).click()
      await stripe.getByRole('button', { name: 'Switch Stripe on' }).waitFor()
      await shot(page, 'integrations')
      await page.reload()
      await page.getByRole('heading', { name: 'Integrations' }).waitFor()
      await page.getByRole('article', { name: 'Slack' }).locator('[data-setting="channel"]').waitFor()
      const html = await page.content()
      expect(html).not.toContain(BOT_TOKEN)
      expect(html).not.toContain(STRIPE_KEY)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
