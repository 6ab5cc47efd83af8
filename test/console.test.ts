import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import {
  browserAvailable as available,
  BROWSER_TEST_MS,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openPage as openPageIn,
  PASSWORD,
  SHOTS,
  shot,
  signIn as signInAt,
  startConsoleWorld,
} from './support/console'

const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>
let world: ConsoleWorld
let h: ConsoleWorld['h']
let fake: ConsoleWorld['fake']
let server: ConsoleWorld['server']
let apiKey: string
let orgId: string
let ownerSession: string

beforeAll(async () => {
  if (!available) return
  // A provider key's base URL is held to the egress policy: the fake provider listens on loopback.
  world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
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
      // One answer whole and one streamed: the stream gives the time to first token.
      for (const stream of [false, true]) {
        const call = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(call.status).toBe(200)
        await call.text()
      }
      await h.requestLog.flush()
      const { page, requested, errors } = await openPage()
      await signIn(page)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const requests = page.locator('[data-figure="Requests"]')
      await requests.waitFor()
      expect(await requests.textContent()).toBe('2')
      // gpt-4o at the fake's 1,000 prompt and 500 completion tokens: $0.0075 a call.
      expect(await page.locator('[data-figure="Cost"]').textContent()).toBe('$0.015')
      expect(await page.locator('[data-figure="Time to first token"]').textContent()).toMatch(/^\d+ ms$/)
      expect(new URL(page.url()).pathname).toBe('/console')
      // Each measure over time, drawn; another window keeps the same traffic in view. The series come
      // in after the totals, so the fifth chart is waited for before they are counted.
      const charts = page.locator('.chart canvas')
      await charts.nth(4).waitFor()
      expect(await charts.count()).toBe(5)
      // Where the traffic went: the model and its cost, ranked.
      const topModels = page.getByRole('figure', { name: 'Top models' })
      await topModels.getByRole('cell', { name: 'gpt-4o', exact: true }).waitFor()
      expect(await topModels.getByRole('cell', { name: '$0.015' }).count()).toBe(1)
      await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true })
      await page.getByLabel('Window').selectOption('7d')
      await page.locator('[data-figure="Requests"]').filter({ hasText: '2' }).waitFor()
      // A bucket too fine for the window is refused by the API, and the page says why.
      await page.getByLabel('Bucket').selectOption('min')
      await page.getByRole('alert').filter({ hasText: 'bucket' }).waitFor()
      await page.getByLabel('Bucket').selectOption('day')
      await page.emulateMedia({ colorScheme: 'dark' })
      await page.screenshot({ path: join(SHOTS, 'overview-dark.png'), fullPage: true })
      await page.setViewportSize({ width: 420, height: 900 })
      await page.screenshot({ path: join(SHOTS, 'overview-narrow.png'), fullPage: true })
      const origin = new URL(server.url).origin
      expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([])
      // The only errors are the series refused for the bucket, which chromium logs as failed loads.
      expect(new Set(errors)).toEqual(
        new Set(['Failed to load resource: the server responded with a status of 400 (Bad Request)']),
      )
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
    'Requests: a new call appears with its cost; the filter builder narrows by model; columns sort; the detail takes feedback, scores and properties and shows the flags',
    async () => {
      for (const [model, content] of [
        ['gpt-4o', 'hi gpt-4o, write to ada@example.com'],
        ['claude-sonnet-4-5', 'hi claude'],
      ]) {
        const call = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'Gw-Property-Customer': 'acme' },
          body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content }] }),
        })
        expect(call.status).toBe(200)
      }
      await h.requestLog.flush()
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Requests' }).click()
      await page.getByRole('heading', { name: 'Requests' }).waitFor()
      await page.getByRole('cell', { name: 'claude-sonnet-4-5', exact: true }).first().waitFor()
      // Applying the filter again reads the log again: a call made since appears.
      const later = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'later' }] }),
      })
      expect(later.status).toBe(200)
      await h.requestLog.flush()
      await page.getByRole('button', { name: 'Apply filter' }).click()
      await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor()
      await page.getByRole('button', { name: 'Add condition' }).click()
      expect(await page.getByLabel('Field 1').inputValue()).toBe('model')
      await page.getByLabel('Value 1').fill('gpt-4o')
      await page.getByRole('button', { name: 'Add condition' }).click()
      await page.getByLabel('Field 2').selectOption('property')
      await page.getByLabel('Property name 2').fill('customer')
      await page.getByLabel('Value 2').fill('acme')
      await page.getByRole('button', { name: 'Apply filter' }).click()
      // The page's policy forbids evaluating strings, so the waits are on locators.
      await page.getByRole('cell', { name: 'claude-sonnet-4-5', exact: true }).first().waitFor({ state: 'detached' })
      // gpt-4o and customer acme: the one call of this test that matches both.
      expect(await page.locator('tbody tr td:nth-child(2)').allTextContents()).toEqual(['gpt-4o'])
      expect(await page.locator('[data-cost]').first().textContent()).toBe('$0.0075')
      // A column header sorts; the same header again turns the order round.
      await page.getByRole('button', { name: 'Latency' }).click()
      await page.locator('th[aria-sort="descending"]').filter({ hasText: 'Latency' }).waitFor()
      await page.getByRole('button', { name: /^Latency/ }).click()
      await page.locator('th[aria-sort="ascending"]').filter({ hasText: 'Latency' }).waitFor()
      await shot(page, 'requests')
      await page.locator('tbody tr td button').first().click()
      await page.getByRole('heading', { name: 'Request', exact: true }).waitFor()
      await page.getByRole('button', { name: 'Good answer' }).click()
      await page.locator('[data-rating]').filter({ hasText: 'Rated good' }).waitFor()
      await page.getByLabel('Score name').fill('relevance')
      await page.getByLabel('Score value').fill('0.9')
      await page.getByRole('button', { name: 'Add score' }).click()
      await page.getByRole('cell', { name: 'relevance', exact: true }).waitFor()
      await page.getByLabel('Property', { exact: true }).fill('reviewed')
      await page.getByLabel('Value', { exact: true }).fill('yes')
      await page.getByRole('button', { name: 'Set property' }).click()
      await page.locator('[data-property="reviewed"]').waitFor()
      await shot(page, 'request-detail')
      // What the page showed is what the API holds.
      const requestId = (await page.locator('dl.facts dd').first().textContent()) ?? ''
      const detail = await h.request('POST', '/v1/request/query-ids', {
        token: ownerSession,
        body: { requestIds: [requestId], includeAnnotations: true },
      })
      const [stored] = ((await detail.json()) as { data: { requests: Array<Record<string, unknown>> } }).data.requests
      expect(stored?.properties).toEqual({ customer: 'acme', reviewed: 'yes' })
      // The call carried an email address: the scan flagged it, as a count, never the address.
      expect(stored?.annotations).toEqual({
        rating: 1,
        scores: [{ name: 'relevance', value: 0.9 }],
        flags: [{ kind: 'pii', category: 'email', occurrences: 1 }],
      })
      expect(await page.locator('[data-flag="pii"]').textContent()).toBe('Personal data: email × 1')
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
    'saved views: the Owner saves a filter and applies it again; a Member applies it but cannot save or delete; the export holds the filtered rows',
    async () => {
      const call = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'Gw-User-Id': '=cmd|calc' },
        body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'export me' }] }),
      })
      expect(call.status).toBe(200)
      await h.requestLog.flush()
      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Requests' }).click()
      await page.getByRole('button', { name: 'Add condition' }).click()
      await page.getByLabel('Value 1').fill('claude-haiku-4-5')
      await page.getByLabel('Save the filter as').fill('haiku only')
      await page.getByRole('button', { name: 'Save view' }).click()
      await page.getByRole('button', { name: 'Delete view haiku only' }).waitFor()
      const saved = await h.request('GET', '/v1/filter', { token: ownerSession })
      expect(((await saved.json()) as { data: Array<{ name: string; filter: unknown }> }).data).toMatchObject([
        { name: 'haiku only', filter: { request: { model: { equals: 'claude-haiku-4-5' } } } },
      ])
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ])
      // Nothing applied yet: the export is of every request; then the view narrows it.
      const every = await h.request('POST', '/v1/request/count/query', { token: ownerSession, body: {} })
      const { count } = ((await every.json()) as { data: { count: number } }).data
      expect((await Bun.file((await download.path()) as string).text()).trimEnd().split('\r\n')).toHaveLength(count + 1)
      await page.getByRole('button', { name: 'Clear' }).click()
      await page.getByLabel('Saved view').selectOption({ label: 'haiku only' })
      await page.getByRole('cell', { name: 'gpt-4o', exact: true }).first().waitFor({ state: 'detached' })
      expect(await page.getByLabel('Value 1').inputValue()).toBe('claude-haiku-4-5')
      expect(await page.locator('tbody tr td:nth-child(2)').allTextContents()).toEqual(['claude-haiku-4-5'])
      const [filtered] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ])
      expect(filtered.suggestedFilename()).toMatch(/^requests-\d{4}-\d{2}-\d{2}T\d{6}\.csv$/)
      const lines = (await Bun.file((await filtered.path()) as string).text()).trimEnd().split('\r\n')
      expect(lines[0]).toStartWith('id,created_at,provider,model,')
      expect(lines).toHaveLength(2)
      expect(lines[1]).toContain(',claude-haiku-4-5,')
      // A user id a spreadsheet would run as a formula is written as text.
      expect(lines[1]).toContain(",'=cmd|calc,")
      await page.getByRole('status').filter({ hasText: 'Exported 1 rows' }).waitFor()
      await shot(page, 'requests-view')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()

      const member = await openPage()
      await signIn(member.page, PASSWORD, MEMBER_EMAIL)
      await member.page.getByRole('link', { name: 'Requests' }).click()
      await member.page.getByLabel('Saved view').selectOption({ label: 'haiku only' })
      await member.page.getByRole('cell', { name: 'claude-haiku-4-5', exact: true }).waitFor()
      expect(await member.page.getByRole('button', { name: 'Save view' }).count()).toBe(0)
      expect(await member.page.getByRole('button', { name: /^Delete view/ }).count()).toBe(0)
      await member.page.close()

      // The Owner deletes the view.
      const again = await openPage()
      await signIn(again.page)
      await again.page.getByRole('link', { name: 'Requests' }).click()
      await again.page.getByRole('button', { name: 'Delete view haiku only' }).click()
      await again.page.getByRole('button', { name: 'Delete view haiku only' }).waitFor({ state: 'detached' })
      expect(
        ((await (await h.request('GET', '/v1/filter', { token: ownerSession })).json()) as { data: unknown[] }).data,
      ).toEqual([])
      await again.page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'framed by another page, the console refuses to show itself',
    async () => {
      const { page } = await openPage()
      await page.setContent(`<iframe title="framed" src="${server.url}/console"></iframe>`)
      const framed = page.frameLocator('iframe[title="framed"]')
      await framed.getByText('The gw console does not open inside a frame of another page.').waitFor()
      expect(await framed.getByLabel('Email').count()).toBe(0)
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

  test(
    'a call that cost a fraction of a cent shows its cost by its significant digits, in the list and in its detail, never as $0.00',
    async () => {
      // gpt-4o-mini at $0.01 and $0.02 per million tokens, for the fake's 1,000 prompt and 500 completion tokens: $0.00002.
      const priced = await h.request('PUT', '/v1/model-prices', {
        token: ownerSession,
        body: { provider: 'openai', model: 'gpt-4o-mini', inputPerMillion: 0.01, outputPerMillion: 0.02 },
      })
      expect(priced.status).toBe(200)
      const call = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a cheap call' }] }),
      })
      expect(call.status).toBe(200)
      const requestId = call.headers.get('gw-id')
      if (!requestId) throw new Error('the call answered no Gw-Id')
      await call.text()
      await h.requestLog.flush()
      const stored = await h.request('POST', '/v1/request/query-ids', { token: ownerSession, body: { requestIds: [requestId] } })
      const [logged] = ((await stored.json()) as { data: { requests: Array<{ cost: number | null }> } }).data.requests
      expect(logged?.cost).toBeCloseTo(0.00002, 12)

      const { page, errors } = await openPage()
      await signIn(page)
      await page.getByRole('link', { name: 'Requests' }).click()
      // Newest first: the cheap call heads the list.
      const newest = page.locator('tbody tr').first()
      await newest.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor()
      expect(await newest.locator('[data-cost]').textContent()).toBe('$0.00002')
      await newest.getByRole('button').click()
      await page.getByRole('heading', { name: 'Request', exact: true }).waitFor()
      const cost = page
        .locator('dl.facts > div')
        .filter({ has: page.getByText('Cost', { exact: true }) })
        .locator('dd')
      expect(await cost.textContent()).toBe('$0.00002')
      await shot(page, 'request-sub-cent')
      await h.request('DELETE', '/v1/model-prices?provider=openai&model=gpt-4o-mini', { token: ownerSession })
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
