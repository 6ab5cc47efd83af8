import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  PASSWORD,
  shot,
  startConsoleWorld,
} from './support/console'

let world: ConsoleWorld

/** One gpt-4o call through the gateway (the fake answers 1,000 prompt and 500 completion tokens: $0.0075). */
async function call(session: string, user: string, customer: string): Promise<void> {
  const answer = await fetch(`${world.server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${world.apiKey}`,
      'content-type': 'application/json',
      'Gw-Session-Id': session,
      'Gw-User-Id': user,
      'Gw-Property-Customer': customer,
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(answer.status).toBe(200)
}

beforeAll(async () => {
  if (!browserAvailable) return
  world = await startConsoleWorld()
  // Session s1: alice, acme, twice; session s2: bob, globex, once.
  await call('s1', 'alice', 'acme')
  await call('s1', 'alice', 'acme')
  // Sessions are listed by their last call's time, in milliseconds: s2's must be the later one.
  await Bun.sleep(5)
  await call('s2', 'bob', 'globex')
  await world.h.requestLog.flush()
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

const data = async <T>(response: Response): Promise<T> => ((await response.json()) as { data: T }).data
const sessionAnnotations = async (sessionId: string) =>
  data<{ rating: number | null; tags: string[] }>(
    await world.h.request('GET', `/v1/session/${sessionId}/annotations`, { token: world.ownerSession }),
  )
const hiddenKeys = async () =>
  (
    await data<Array<{ key: string }>>(
      await world.h.request('POST', '/v1/property/hidden/query', { token: world.ownerSession, body: {} }),
    )
  ).map((p) => p.key)

/** The row of a table that holds the cell named `name` exactly. */
const row = (page: Page, table: string, name: string) =>
  page
    .getByRole('table', { name: table, exact: true })
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name, exact: true }) })
const sessionRow = (page: Page, sessionId: string) =>
  page
    .getByRole('table', { name: 'Sessions', exact: true })
    .getByRole('row')
    .filter({ has: page.getByRole('button', { name: `Open session ${sessionId}`, exact: true }) })

describe.skipIf(!browserAvailable)('the traffic views, in chromium', () => {
  test(
    'Sessions: both sessions with their request counts, newest first; one opens into its requests; the Owner rates and tags it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Sessions')
      const sessions = page.getByRole('table', { name: 'Sessions' })
      await sessions.waitFor()
      const keys = await sessions.locator('tbody tr td:first-child').allTextContents()
      expect(keys).toEqual(['s2', 's1'])
      expect(await sessionRow(page, 's1').locator('[data-requests]').textContent()).toBe('2')
      expect(await sessionRow(page, 's2').locator('[data-requests]').textContent()).toBe('1')
      expect(await sessionRow(page, 's1').getByRole('cell', { name: '$0.015', exact: true }).count()).toBe(1)
      await shot(page, 'sessions')

      await page.getByRole('button', { name: 'Open session s1' }).click()
      await page.getByRole('heading', { name: 'Session s1' }).waitFor()
      const requests = page.getByRole('table', { name: 'Requests of the session' })
      await requests.waitFor()
      expect(await requests.locator('tbody tr').count()).toBe(2)
      expect(await requests.getByRole('cell', { name: 'alice', exact: true }).count()).toBe(2)

      // A request of the session opens in the request log's own detail, and leads back to the session.
      await page
        .getByRole('button', { name: /^Open request / })
        .first()
        .click()
      await page.getByRole('heading', { name: 'Request', exact: true }).waitFor()
      await page.getByRole('button', { name: '← Session' }).click()
      await requests.waitFor()

      await page.getByRole('button', { name: 'Good', exact: true }).click()
      await page.getByRole('status').filter({ hasText: 'Rated good.' }).waitFor()
      expect((await sessionAnnotations('s1')).rating).toBe(1)
      await page.getByLabel('Tag', { exact: true }).fill('escalated')
      await page.getByRole('button', { name: 'Add tag' }).click()
      await page.getByRole('list', { name: 'Tags' }).getByText('escalated', { exact: true }).waitFor()
      // Tagging answers every tag of the session: the one added in the page is among them.
      const tagged = await data<{ tags: string[] }>(
        await world.h.request('POST', '/v1/session/s1/tag', { token: world.ownerSession, body: { tag: 'vip' } }),
      )
      expect(tagged.tags).toEqual(['escalated', 'vip'])
      await shot(page, 'session-detail')

      // Opened again, the session shows what was said of it, the tag added through the API too.
      await page.getByRole('button', { name: '← All sessions' }).click()
      await page.getByRole('button', { name: 'Open session s1' }).click()
      await page.getByRole('status').filter({ hasText: 'Rated good.' }).waitFor()
      await page.getByRole('list', { name: 'Tags' }).getByText('vip', { exact: true }).waitFor()
      await page.getByRole('button', { name: '← All sessions' }).click()
      await page.getByRole('button', { name: 'Open session s2' }).waitFor()
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'Users: both users with their costs, and the figures of the window',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Users')
      await page.getByRole('table', { name: 'Users' }).waitFor()
      // The costliest first.
      expect(await page.locator('table[aria-label="Users"] tbody tr td:first-child').allTextContents()).toEqual(['alice', 'bob'])
      expect(await row(page, 'Users', 'alice').getByRole('cell', { name: '$0.015', exact: true }).count()).toBe(1)
      expect(await row(page, 'Users', 'bob').getByRole('cell', { name: '$0.0075', exact: true }).count()).toBe(1)
      expect(await page.locator('[data-figure="Users"]').textContent()).toBe('2')
      expect(await page.locator('[data-figure="Requests per user"]').textContent()).toBe('1.5')
      expect(await page.locator('[data-figure="Cost per user"]').textContent()).toBe('$0.0113')
      await shot(page, 'users')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'users-narrow')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'Users below the Growth tier: the API refusal is shown with its message',
    async () => {
      const email = 'free@console.test'
      await world.h.services.organizations.bootstrap({ orgName: 'free', email, tier: 'free', password: PASSWORD })
      const { page } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Users', email)
      const alert = page.getByRole('alert')
      await alert.waitFor()
      expect(await alert.textContent()).toBe('The Users feature needs the growth tier or higher; this organization is on free')
      expect(await page.getByRole('table', { name: 'Users' }).count()).toBe(0)
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'Properties: customer with its values by cost and by requests, searched; the Owner hides it and restores it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Properties')
      await page.getByRole('button', { name: 'Show values of customer' }).click()
      const byCost = page.getByRole('figure', { name: 'By cost' })
      await byCost.getByRole('cell', { name: 'acme', exact: true }).waitFor()
      expect(await byCost.locator('tbody td:first-child').allTextContents()).toEqual(['acme', 'globex'])
      expect(await byCost.locator('tbody td:last-child').allTextContents()).toEqual(['$0.015', '$0.0075'])
      const byRequests = page.getByRole('figure', { name: 'By requests' })
      await byRequests.getByRole('cell', { name: 'globex', exact: true }).waitFor()
      expect(await byRequests.locator('tbody td:nth-child(2)').allTextContents()).toEqual(['2', '1'])
      await shot(page, 'properties')
      await page.emulateMedia({ colorScheme: 'dark' })
      await shot(page, 'properties-dark')
      await page.emulateMedia({ colorScheme: 'light' })

      await page.getByLabel('Search values').fill('glob')
      await page.getByRole('button', { name: 'Search', exact: true }).click()
      const found = page.getByRole('figure', { name: 'Values containing “glob”' })
      await found.getByRole('cell', { name: 'globex', exact: true }).waitFor()
      expect(await found.locator('tbody tr').count()).toBe(1)

      await page.getByRole('button', { name: 'Hide customer' }).click()
      await page.getByRole('button', { name: 'Restore customer' }).waitFor()
      expect(await page.getByRole('button', { name: 'Show values of customer' }).count()).toBe(0)
      expect(await hiddenKeys()).toEqual(['customer'])
      await page.getByRole('button', { name: 'Restore customer' }).click()
      await page.getByRole('button', { name: 'Show values of customer' }).waitFor()
      expect(await hiddenKeys()).toEqual([])
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member reads every view, rates and tags a session (traffic.annotate), but has no hide or restore',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Sessions', MEMBER_EMAIL)
      await page.getByRole('button', { name: 'Open session s2' }).click()
      await page.getByRole('table', { name: 'Requests of the session' }).waitFor()
      await page.getByRole('button', { name: 'Bad', exact: true }).click()
      await page.getByRole('status').filter({ hasText: 'Rated bad.' }).waitFor()
      expect((await sessionAnnotations('s2')).rating).toBe(0)
      await page.getByLabel('Tag', { exact: true }).fill('billing')
      await page.getByRole('button', { name: 'Add tag' }).click()
      await page.getByRole('list', { name: 'Tags' }).getByText('billing', { exact: true }).waitFor()
      expect((await sessionAnnotations('s2')).tags).toEqual(['billing'])

      await page.getByRole('link', { name: 'Users', exact: true }).click()
      await page.getByRole('table', { name: 'Users' }).getByRole('cell', { name: 'alice', exact: true }).waitFor()

      await page.getByRole('link', { name: 'Properties', exact: true }).click()
      await page.getByRole('button', { name: 'Show values of customer' }).click()
      await page.getByRole('figure', { name: 'By cost' }).getByRole('cell', { name: 'acme', exact: true }).waitFor()
      expect(await page.getByRole('button', { name: /^Hide / }).count()).toBe(0)
      expect(await page.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0)
      // The server refuses a Member as well: the page leaves out what would fail.
      const member = await world.h.member(world.orgId, 'member')
      const refused = await world.h.request('POST', '/v1/property/hide', {
        token: member.sessionToken,
        body: { key: 'customer' },
      })
      expect(refused.status).toBe(403)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
