import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import {
  browserAvailable as available,
  BROWSER_TEST_MS,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openPage as openPageIn,
  PASSWORD,
  SHOTS,
  signIn as signInAt,
  startConsoleWorld,
} from './support/console'

let world: ConsoleWorld
let h: ConsoleWorld['h']
let fake: ConsoleWorld['fake']
let server: ConsoleWorld['server']
let apiKey: string
let orgId: string
let ownerSession: string

beforeAll(async () => {
  if (!available) return
  world = await startConsoleWorld()
  ;({ h, fake, server, apiKey, orgId, ownerSession } = world)
})
afterAll(async () => {
  if (available) await world.close()
})

const openPage = () => openPageIn(world.browser)
const signIn = (page: Page, password = PASSWORD, email?: string) => signInAt(page, server.url, email, password)

describe.skipIf(!available)('the console, in chromium', () => {
  test(
    '/ leads to the console; signing in shows the overview with the traffic gw served, every request to gw alone',
    async () => {
      const call = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(call.status).toBe(200)
      await h.requestLog.flush()
      const { page, requested, errors } = await openPage()
      await signIn(page)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const requests = page.locator('[data-figure="Requests"]')
      await requests.waitFor()
      expect(await requests.textContent()).toBe('1')
      // gpt-4o at the fake's 1,000 prompt and 500 completion tokens: $0.0075.
      expect(await page.locator('[data-figure="Cost"]').textContent()).toBe('$0.0075')
      expect(new URL(page.url()).pathname).toBe('/console')
      // Each measure over time, drawn; another window keeps the same traffic in view.
      expect(await page.locator('.chart canvas').count()).toBe(4)
      await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true })
      await page.getByLabel('Window').selectOption('7d')
      await page.locator('[data-figure="Requests"]').filter({ hasText: '1' }).waitFor()
      await page.emulateMedia({ colorScheme: 'dark' })
      await page.screenshot({ path: join(SHOTS, 'overview-dark.png'), fullPage: true })
      await page.setViewportSize({ width: 420, height: 900 })
      await page.screenshot({ path: join(SHOTS, 'overview-narrow.png'), fullPage: true })
      const origin = new URL(server.url).origin
      expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([])
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a wrong password is refused with the API message, and nothing else happens',
    async () => {
      const { page } = await openPage()
      await signIn(page, 'not the password')
      const alert = page.getByRole('alert')
      await alert.waitFor()
      expect(await alert.textContent()).toBe('the email or the password is wrong')
      await page.screenshot({ path: join(SHOTS, 'sign-in-refused.png') })
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    "signing out ends the session on the server: the console's token no longer opens anything",
    async () => {
      const { page } = await openPage()
      await signIn(page)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('gw.session') ?? '{}').token as string)
      expect(
        (await fetch(`${server.url}/v1/organization/settings`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200)
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      expect(await page.evaluate(() => sessionStorage.getItem('gw.session'))).toBeNull()
      expect(
        (await fetch(`${server.url}/v1/organization/settings`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(401)
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'an owner creates an API key, sees its secret once, and it works at once; a reload shows it no more',
    async () => {
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'API keys' }).click()
      await page.getByRole('heading', { name: 'API keys' }).waitFor()
      await page.getByLabel('Name').fill('from the console')
      await page.getByLabel('gateway').check()
      await page.getByRole('button', { name: 'Create key' }).click()
      const secret = page.locator('[data-secret]')
      await secret.waitFor()
      const key = (await secret.textContent()) ?? ''
      expect(key).toStartWith('gw-sk-')
      await page.screenshot({ path: join(SHOTS, 'keys-created.png'), fullPage: true })
      const call = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(call.status).toBe(200)
      await page.reload()
      await page.getByRole('cell', { name: 'from the console', exact: true }).waitFor()
      expect(await page.locator('[data-secret]').count()).toBe(0)
      expect(await page.getByRole('cell', { name: 'gateway', exact: true }).count()).toBe(1)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member sees the keys but no action that would change them',
    async () => {
      const { page } = await openPage()
      await signIn(page, PASSWORD, MEMBER_EMAIL)
      await page.getByRole('link', { name: 'API keys' }).click()
      await page.getByRole('heading', { name: 'API keys' }).waitFor()
      await page.getByRole('cell', { name: 'bootstrap' }).waitFor()
      expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0)
      expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0)
      await page.screenshot({ path: join(SHOTS, 'keys-member.png'), fullPage: true })
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'Requests: a new call appears with its cost, the model filter narrows the list, the detail takes feedback',
    async () => {
      for (const model of ['gpt-4o', 'claude-sonnet-4-5']) {
        const call = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: `hi ${model}` }] }),
        })
        expect(call.status).toBe(200)
      }
      await h.requestLog.flush()
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Requests' }).click()
      await page.getByRole('heading', { name: 'Requests' }).waitFor()
      await page.getByRole('cell', { name: 'claude-sonnet-4-5', exact: true }).waitFor()
      await page.getByLabel('Model').fill('gpt-4o')
      await page.getByRole('button', { name: 'Filter' }).click()
      // The page's policy forbids evaluating strings, so the waits are on locators.
      await page.getByRole('cell', { name: 'claude-sonnet-4-5', exact: true }).first().waitFor({ state: 'detached' })
      const models = await page.locator('tbody tr td:nth-child(2)').allTextContents()
      expect(models.length).toBeGreaterThan(0)
      expect(new Set(models)).toEqual(new Set(['gpt-4o']))
      expect(await page.locator('[data-cost]').first().textContent()).toBe('$0.0075')
      await page.screenshot({ path: join(SHOTS, 'requests.png'), fullPage: true })
      await page.locator('tbody tr td button').first().click()
      await page.getByRole('heading', { name: 'Request' }).waitFor()
      await page.getByRole('button', { name: 'Good answer' }).click()
      await page.getByRole('status').filter({ hasText: 'Rated good' }).waitFor()
      await page.screenshot({ path: join(SHOTS, 'request-detail.png'), fullPage: true })
      // The feedback is stored, and audited as a write of this organisation.
      const audit = await h.request('GET', `/v1/organization/${orgId}/audit`, { token: ownerSession })
      const entries = ((await audit.json()) as { data: { entries: Array<{ action: string }> } }).data.entries
      expect(entries.some((entry) => entry.action === 'POST /v1/request/:requestId/feedback')).toBe(true)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'the audit log shows a key being created, filters by action, and downloads as CSV; a Member has no audit page',
    async () => {
      const created = await h.request('POST', '/v1/api-keys', { token: ownerSession, body: { name: 'audited key' } })
      expect(created.status).toBe(201)
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Audit log' }).click()
      await page.getByRole('heading', { name: 'Audit log' }).waitFor()
      await page.getByLabel('Action').fill('POST /v1/api-keys')
      await page.getByRole('button', { name: 'Filter' }).click()
      await page.locator('tbody td code').filter({ hasNotText: 'POST /v1/api-keys' }).first().waitFor({ state: 'detached' })
      expect(await page.getByRole('cell', { name: 'POST /v1/api-keys', exact: true }).count()).toBeGreaterThan(0)
      await page.screenshot({ path: join(SHOTS, 'audit.png'), fullPage: true })
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ])
      expect(download.suggestedFilename()).toMatch(/^audit-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.csv$/)
      const csv = await Bun.file((await download.path()) as string).text()
      expect(csv.split('\n')[0]).toStartWith('id,created_at,actor_id')
      expect(csv).toContain('POST /v1/api-keys')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()

      const member = await openPage()
      await signIn(member.page, PASSWORD, MEMBER_EMAIL)
      await member.page.getByRole('heading', { name: 'Overview' }).waitFor()
      await member.page.getByRole('link', { name: 'API keys' }).waitFor()
      expect(await member.page.getByRole('link', { name: 'Audit log' }).count()).toBe(0)
      await member.page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'an owner adds a provider key: never shown again, calls run on it at once, deleting it stops that; a Member has no such page',
    async () => {
      const SECRET = 'sk-console-own-key-0123456789abcdef'
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Provider keys' }).click()
      await page.getByRole('heading', { name: 'Provider keys' }).waitFor()
      await page.getByLabel('Name').fill('our openai')
      await page.getByLabel('Secret').fill(SECRET)
      await page.getByLabel('Base URL (optional)').fill(fake.openaiBaseUrl)
      await page.getByRole('button', { name: 'Add key' }).click()
      await page.getByRole('cell', { name: 'our openai', exact: true }).waitFor()
      const masked = (await page.locator('[data-masked]').first().textContent()) ?? ''
      expect(masked).not.toContain(SECRET)
      expect(await page.content()).not.toContain(SECRET)
      await page.screenshot({ path: join(SHOTS, 'provider-keys.png'), fullPage: true })
      const call = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(call.status).toBe(200)
      expect(fake.calls.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`)
      await page.getByRole('button', { name: 'Delete our openai' }).click()
      await page.getByRole('cell', { name: 'our openai', exact: true }).waitFor({ state: 'detached' })
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()

      const member = await openPage()
      await signIn(member.page, PASSWORD, MEMBER_EMAIL)
      await member.page.getByRole('link', { name: 'API keys' }).waitFor()
      expect(await member.page.getByRole('link', { name: 'Provider keys' }).count()).toBe(0)
      await member.page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'settings: an owner turns PII redaction on and stops keeping bodies; a Member sees them, unable to change them',
    async () => {
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Settings' }).click()
      await page.getByRole('heading', { name: 'Settings' }).waitFor()
      await page.getByLabel(/Redact emails/).check()
      await page.getByRole('status').filter({ hasText: 'PII redaction saved' }).waitFor()
      await page.getByLabel('Keep bodies').uncheck()
      await page.getByRole('button', { name: 'Save retention' }).click()
      await page.getByRole('status').filter({ hasText: 'Body retention saved' }).waitFor()
      await page.screenshot({ path: join(SHOTS, 'settings.png'), fullPage: true })
      const stored = (await (await h.request('GET', '/v1/organization/settings', { token: ownerSession })).json()) as {
        data: { piiRedaction: boolean; bodyRetention: { mode: string } }
      }
      expect(stored.data).toMatchObject({ piiRedaction: true, bodyRetention: { mode: 'none' } })
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()

      const member = await openPage()
      await signIn(member.page, PASSWORD, MEMBER_EMAIL)
      await member.page.getByRole('link', { name: 'Settings' }).click()
      await member.page.getByRole('heading', { name: 'Settings' }).waitFor()
      expect(await member.page.getByLabel(/Redact emails/).isChecked()).toBe(true)
      expect(await member.page.getByLabel(/Redact emails/).isDisabled()).toBe(true)
      expect(await member.page.getByRole('button', { name: 'Save retention' }).isDisabled()).toBe(true)
      await member.page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'rate limits: an owner adds a rule, which the API holds as a policy, and deletes it; a Member sees no action',
    async () => {
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Rate limits' }).click()
      await page.getByRole('heading', { name: 'Rate limits' }).waitFor()
      await page.getByLabel('Quota').fill('1000')
      await page.locator('select[name="segment"]').selectOption('model')
      await page.getByRole('button', { name: 'Add rule' }).click()
      const policy = page.locator('tbody code')
      await policy.first().waitFor()
      const shown = (await policy.first().textContent()) ?? ''
      const listed = (await (await h.request('GET', '/v1/rate-limits', { token: ownerSession })).json()) as {
        data: Array<{ policy: string; segment: string }>
      }
      expect(listed.data).toEqual([expect.objectContaining({ policy: shown, segment: 'model' })])
      await page.screenshot({ path: join(SHOTS, 'rate-limits.png'), fullPage: true })

      const member = await openPage()
      await signIn(member.page, PASSWORD, MEMBER_EMAIL)
      await member.page.getByRole('link', { name: 'Rate limits' }).click()
      await member.page.locator('tbody code').first().waitFor()
      expect(await member.page.getByRole('button', { name: 'Add rule' }).count()).toBe(0)
      expect(await member.page.getByRole('button', { name: /^Delete/ }).count()).toBe(0)
      await member.page.close()

      await page.getByRole('button', { name: `Delete ${shown}` }).click()
      await page.getByText('No rules').waitFor()
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
