import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { chat, data } from './support/budgets'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  PASSWORD,
  shot,
  signIn,
  startConsoleWorld,
} from './support/console'

/**
 * The spend-control pages: budgets (limits and where they stand, windows, alerts, downgrades,
 * breaches) and model prices, as the Owner, as a Member, and as someone who may read the budgets
 * but not change them.
 */
const READER_OWNER = 'reader-owner@console.test'
const READER = 'spend-reader@console.test'

let world: ConsoleWorld
/** An Enterprise organisation, where a custom role can read budgets without setting them. */
let enterprise: { orgId: string; session: string }

beforeAll(async () => {
  if (!browserAvailable) return
  // The webhook that takes budget notices points at loopback, which the operator allows here.
  world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }) })
  const hook = await world.h.request('POST', '/v1/webhooks', {
    token: world.ownerSession,
    body: { destination: 'http://127.0.0.1:9/budget', events: ['budget.threshold_crossed', 'budget.breached'] },
  })
  expect(hook.status).toBe(201)

  const { organizations, members } = world.h.services
  const ent = await organizations.bootstrap({ orgName: 'reading', email: READER_OWNER, tier: 'enterprise', password: PASSWORD })
  enterprise = { orgId: ent.orgId, session: ent.sessionToken }
  const role = await data<{ id: string }>(
    await world.h.request('POST', `/v1/organization/${ent.orgId}/roles`, {
      token: ent.sessionToken,
      body: { name: 'Spend reader', permissions: ['reports.read'] },
    }),
  )
  await members.add({ orgId: ent.orgId, email: READER, role: role.id, password: PASSWORD })
  for (const body of [
    { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: 'month' },
    { scope: { kind: 'customer' }, metric: 'requests', limit: 100, window: 'day' },
  ]) {
    const put = await world.h.request('PUT', '/v1/budget/window-limit', { token: ent.sessionToken, body })
    expect(put.status).toBe(200)
  }
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

/** What someone may do, as the console reads it. */
async function permissionsOf(email: string, orgId: string): Promise<string[]> {
  const login = await world.h.request('POST', '/v1/auth/login', { body: { email, password: PASSWORD, orgId } })
  const { sessionToken } = await data<{ sessionToken: string }>(login)
  const me = await world.h.request('GET', `/v1/organization/${orgId}/permissions/me`, { token: sessionToken })
  return (await data<{ permissions: string[] }>(me)).permissions
}

/** Both widths the console is looked at in. */
async function shots(page: Page, name: string) {
  await shot(page, name)
  await page.setViewportSize({ width: 420, height: 900 })
  await shot(page, `${name}-narrow`)
  await page.setViewportSize({ width: 1280, height: 800 })
}

const limitRow = (page: Page, text: string) =>
  page.getByRole('table', { name: 'Limits' }).locator('tbody tr').filter({ hasText: text })

describe.skipIf(!browserAvailable)('the spend-control pages, in chromium', () => {
  test(
    'the Owner sets a window and a velocity limit, sees calls move them, edits one, sets alerts, a downgrade and a breach',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Budgets')
      await page.getByText('No limits').waitFor()

      const windowForm = page.getByRole('form', { name: 'New window limit' })
      await windowForm.getByLabel('Limit (USD, tokens or requests)').fill('1')
      await windowForm.getByLabel(/^Window/).selectOption('day')
      await windowForm.getByRole('button', { name: 'Add window limit' }).click()
      await limitRow(page, '$1.00 per day').waitFor()

      const velocityForm = page.getByRole('form', { name: 'New velocity limit' })
      await velocityForm.getByLabel('Most USD').fill('0.5')
      await velocityForm.getByLabel('In any (seconds)').fill('60')
      await velocityForm.getByRole('button', { name: 'Add velocity limit' }).click()
      await limitRow(page, 'in any 60 s').waitFor()

      // A fixed window asks for its length only once it is chosen.
      const tokensForm = page.getByRole('form', { name: 'New window limit' })
      expect(await tokensForm.getByLabel('Seconds (60 or more)').count()).toBe(0)
      await tokensForm.getByLabel('Measure').selectOption('tokens')
      await tokensForm.getByLabel('Limit (USD, tokens or requests)').fill('100000')
      await tokensForm.getByLabel(/^Window/).selectOption('seconds')
      await tokensForm.getByLabel('Seconds (60 or more)').fill('7200')
      await tokensForm.getByLabel('When reached').selectOption('alert')
      await tokensForm.getByRole('button', { name: 'Add window limit' }).click()
      await limitRow(page, '100,000 tokens per 7,200 s').getByText('then only alert').waitFor()
      expect(await tokensForm.getByLabel(/^Window/).inputValue()).toBe('month')
      expect(await limitRow(page, '$1.00 per day').locator('[data-spent]').textContent()).toBe('$0.00')

      // Three calls of $0.0075 each: both limits count them.
      for (let call = 0; call < 3; call++) expect((await chat(world.h, world.apiKey)).status).toBe(200)
      await page.getByRole('button', { name: 'Refresh' }).click()
      const daily = limitRow(page, '$1.00 per day')
      await daily.locator('[data-spent]').filter({ hasText: '$0.0225' }).waitFor()
      expect(await daily.locator('[data-remaining]').textContent()).toBe('$0.9775')
      expect(await daily.locator('[data-used]').textContent()).toBe('2.3%')
      expect(await daily.locator('[data-status]').getAttribute('data-status')).toBe('ok')
      const velocity = limitRow(page, 'in any 60 s')
      expect(await velocity.locator('[data-spent]').textContent()).toBe('$0.0225')
      expect(await velocity.locator('[data-remaining]').textContent()).toBe('$0.4775')
      const tokens = limitRow(page, '100,000 tokens per 7,200 s')
      expect(await tokens.locator('[data-spent]').textContent()).toBe('4,500 tokens')
      expect(await tokens.locator('[data-remaining]').textContent()).toBe('95,500 tokens')

      // Editing fills the form with the limit; saving changes it in place.
      await page.getByRole('button', { name: 'Edit $1.00 per day, the organization' }).click()
      const change = page.getByRole('form', { name: 'Change a window limit' })
      expect(await change.getByLabel('Limit (USD, tokens or requests)').inputValue()).toBe('1')
      await change.getByLabel('Limit (USD, tokens or requests)').fill('0.025')
      await change.getByRole('button', { name: 'Save changes' }).click()
      await limitRow(page, '$0.025 per day').locator('[data-status="warning"]').waitFor()
      await page.getByRole('form', { name: 'New window limit' }).waitFor()

      // The API's refusal is shown beside the form that caused it.
      const windows = page.getByRole('form', { name: 'Calendar windows' })
      await windows.getByLabel('Time zone (IANA, such as Europe/Paris)').fill('Mars/Olympus')
      await windows.getByRole('button', { name: 'Save windows' }).click()
      await page.getByRole('alert').filter({ hasText: 'is not an IANA time zone' }).waitFor()
      await windows.getByLabel('Time zone (IANA, such as Europe/Paris)').fill('Europe/Paris')
      await windows.getByLabel('Week starts on').selectOption('Sunday')
      await windows.getByRole('button', { name: 'Save windows' }).click()
      await page.getByRole('alert').waitFor({ state: 'detached' })

      const alerts = page.getByRole('form', { name: 'Alerts' })
      await alerts.getByLabel(/^Thresholds/).fill('80, 50')
      await alerts.getByRole('button', { name: 'Save alerts' }).click()
      await page.locator('[data-alert-config]').filter({ hasText: 'Alerts at 50%, 80% of each limit, on webhook.' }).waitFor()

      const downgrade = page.getByRole('form', { name: 'New downgrade mapping' })
      await downgrade.getByLabel(/^From model/).fill('gpt-4o')
      await downgrade.getByLabel('To model').fill('gpt-4o-mini')
      await downgrade.getByLabel(/^From % of the limit/).fill('90')
      await downgrade.getByRole('button', { name: 'Add downgrade' }).click()
      await page
        .getByRole('table', { name: 'Downgrade mappings' })
        .locator('tr')
        .filter({ hasText: 'gpt-4o-mini' })
        .filter({ hasText: 'from 90% of the limit' })
        .waitFor()

      const breach = page.getByRole('form', { name: 'Record a breach' })
      await page.getByText('No breaches.').waitFor()
      await breach.getByLabel('What was breached').fill('Finance: the daily plan is spent')
      await breach.getByLabel('Limit breached').selectOption({ label: '$0.025 per day, the organization' })
      await breach.getByLabel(/^Spent/).fill('0.03')
      await breach.getByRole('button', { name: 'Record breach' }).click()
      const logged = page.getByRole('table', { name: 'Breaches' }).locator('tbody tr')
      await logged.filter({ hasText: 'Finance: the daily plan is spent' }).filter({ hasText: 'recorded by hand' }).waitFor()
      expect(await logged.first().textContent()).toContain('$0.03')

      await page.getByRole('button', { name: 'Send a test notice' }).click()
      await page.locator('[data-notice-sent]').filter({ hasText: 'Test notice sent: 1 delivery queued' }).waitFor()
      await shots(page, 'budgets')

      await page.getByRole('button', { name: 'Delete $0.50 in any 60 s, the organization' }).click()
      await limitRow(page, 'in any 60 s').waitFor({ state: 'detached' })
      const limits = await data<unknown[]>(await world.h.request('GET', '/v1/budget/summary', { token: world.ownerSession }))
      expect(limits).toHaveLength(2)
      const settings = await data<{ windowSettings: unknown }>(
        await world.h.request('GET', '/v1/budget/settings', { token: world.ownerSession }),
      )
      expect(settings.windowSettings).toEqual({ timezone: 'Europe/Paris', weekStart: 7, monthStartDay: 1 })
      expect(
        errors.filter((error) => !error.includes('status of 400')),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    "the Owner sets a price, sees an import's bad row named and nothing changed, imports from a file and deletes a price",
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Model prices')
      await page.getByText('No overrides').waitFor()

      const set = page.getByRole('form', { name: 'Set a price' })
      await set.getByLabel('Model', { exact: true }).fill('gpt-4o-mini')
      await set.getByLabel('Input, USD per million tokens').fill('0.1')
      await set.getByLabel('Output, USD per million tokens').fill('0.4')
      await set.getByLabel('Fee per call, USD').fill('0.001')
      await set.getByRole('button', { name: 'Set price' }).click()
      const rows = page.getByRole('table', { name: 'Price overrides' }).locator('tbody tr')
      const mini = rows.filter({ hasText: 'gpt-4o-mini' })
      await mini.waitFor()
      expect(await mini.locator('td').nth(2).textContent()).toBe('$0.10')
      expect(await mini.locator('td').nth(6).textContent()).toBe('$0.001')
      expect(await mini.locator('[data-in-force]').textContent()).toBe('yes')

      const importForm = page.getByRole('form', { name: 'Import prices' })
      await importForm
        .getByLabel('Prices', { exact: true })
        .fill(
          [
            'provider,model,inputPerMillion,outputPerMillion,maxOutputTokens',
            'anthropic,claude-house,3,15,8192',
            'openai,house-gpt,abc,10,4096',
          ].join('\n'),
        )
      await importForm.getByRole('button', { name: 'Import' }).click()
      await importForm
        .getByRole('alert')
        .filter({ hasText: 'row 2 (line 3), inputPerMillion: "abc" is not a decimal number' })
        .waitFor()
      expect(await rows.count()).toBe(1)
      await shots(page, 'model-prices-refused')

      // A file sets the text and its format; the import answers how many prices it took.
      await importForm.getByLabel('Or read them from a file').setInputFiles({
        name: 'prices.json',
        mimeType: 'application/json',
        buffer: Buffer.from(
          JSON.stringify([
            { provider: 'anthropic', model: 'claude-house', inputPerMillion: 3, outputPerMillion: 15, maxOutputTokens: 8192 },
          ]),
        ),
      })
      // The file is read in the background: the text shows when it is in.
      const text = importForm.getByLabel('Prices', { exact: true })
      for (const until = Date.now() + 5_000; !(await text.inputValue()).includes('claude-house') && Date.now() < until; )
        await Bun.sleep(50)
      expect(await importForm.getByLabel('Format').inputValue()).toBe('json')
      await importForm.getByRole('button', { name: 'Import' }).click()
      await importForm.getByRole('status').filter({ hasText: 'Imported 1 price' }).waitFor()
      await rows.filter({ hasText: 'claude-house' }).waitFor()
      expect(await rows.count()).toBe(2)
      await shots(page, 'model-prices')

      await mini.getByRole('button', { name: /^Delete the price of openai gpt-4o-mini/ }).click()
      await mini.waitFor({ state: 'detached' })
      expect(await rows.count()).toBe(1)
      expect(
        errors.filter((error) => !error.includes('status of 400')),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member has no Budgets page and sees prices without changing them; a budget reader sees the budgets without forms',
    async () => {
      expect(await permissionsOf(MEMBER_EMAIL, world.orgId)).not.toContain('reports.read')
      const member = await openPage(world.browser)
      await openConsolePage(member.page, world.server.url, 'Model prices', MEMBER_EMAIL)
      await member.page.getByRole('table', { name: 'Price overrides' }).getByText('claude-house').waitFor()
      expect(await member.page.getByRole('link', { name: 'Budgets' }).count()).toBe(0)
      expect(await member.page.getByRole('form').count()).toBe(0)
      expect(await member.page.getByRole('button', { name: /^Delete/ }).count()).toBe(0)
      expect(member.errors, member.errors.join('\n')).toEqual([])
      await member.page.close()

      const permissions = await permissionsOf(READER, enterprise.orgId)
      expect(permissions).toContain('reports.read')
      expect(permissions).not.toContain('spend_controls.write')
      const { page, errors } = await openPage(world.browser)
      await signIn(page, world.server.url, READER)
      await page.getByRole('link', { name: 'Budgets', exact: true }).click()
      await page.getByRole('heading', { name: 'Budgets', exact: true }).waitFor()
      await limitRow(page, '$5.00 per month').locator('[data-spent]').filter({ hasText: '$0.00' }).waitFor()
      await limitRow(page, 'each customer').getByText('Applies to each customer on its own').waitFor()
      expect(await limitRow(page, 'each customer').locator('[data-status]').textContent()).toBe('per value')
      await page.getByText('No breaches.').waitFor()
      // Read-only: the settings are shown as facts, and nothing offers a change.
      await page.getByText('Week starts on').waitFor()
      expect(await page.getByRole('form').count()).toBe(0)
      expect(await page.getByRole('button', { name: /^(Edit|Delete|Send a test notice)/ }).count()).toBe(0)
      await shots(page, 'budgets-read-only')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
