import { afterAll, beforeAll, expect, test } from 'bun:test'
import { data } from './support/budgets'
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

/**
 * The records' retention on the Settings page, next to the bodies': the operator's bound shown, an
 * Owner's own days saved, a refusal from the API (a budget counts a longer window) shown as it is said,
 * and a Member who sees it and cannot change it.
 */

let world: ConsoleWorld
beforeAll(async () => {
  if (!browserAvailable) return
  world = await startConsoleWorld({ requestRetentionDays: 90 })
  const put = await world.h.request('PUT', '/v1/budget/window-limit', {
    token: world.ownerSession,
    body: { scope: { kind: 'org' }, metric: 'usd', limit: 5, window: 'month' },
  })
  expect(put.status).toBe(200)
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

const retentionOf = async () =>
  (
    await data<{ requestRetention: { days: number | null; own: number | null } }>(
      await world.h.request('GET', '/v1/organization/settings', { token: world.ownerSession }),
    )
  ).requestRetention

test.skipIf(!browserAvailable)(
  "settings: an Owner keeps records fewer days than the operator's 90, within the budgets' month; a Member only reads it",
  async () => {
    const { page, errors } = await openPage(world.browser)
    await openConsolePage(page, world.server.url, 'Settings')
    const form = page.getByRole('form', { name: 'Record retention' })
    await form.getByText("Request records are kept 90 days (this gw's default). This gw keeps them at most 90 days.").waitFor()
    expect(await form.getByLabel(/This gw's default \(90 days\)/).isChecked()).toBe(true)

    await form.getByLabel(/Fewer days/).check()
    await form.getByLabel(/Days records are kept/).fill('20')
    await form.getByRole('button', { name: 'Save record retention' }).click()
    const refusal = page.getByRole('alert')
    await refusal.filter({ hasText: 'at least 31' }).waitFor()
    expect(await refusal.textContent()).toContain('month')
    await shot(page, 'settings-record-retention-refused')
    expect((await retentionOf()).own).toBeNull()

    await form.getByLabel(/Days records are kept/).fill('45')
    await form.getByRole('button', { name: 'Save record retention' }).click()
    await page.getByRole('status').filter({ hasText: 'Record retention saved' }).waitFor()
    await form.getByText("Request records are kept 45 days (this organization's setting).").waitFor()
    expect(await retentionOf()).toMatchObject({ days: 45, own: 45 })
    await shot(page, 'settings-record-retention')
    // The one 400 is the refusal above, which the page showed.
    const unexpected = errors.filter((error) => !/status of 400/.test(error))
    expect(unexpected, unexpected.join('\n')).toEqual([])
    expect(errors).toHaveLength(1)
    await page.close()

    const member = await openPage(world.browser)
    await openConsolePage(member.page, world.server.url, 'Settings', MEMBER_EMAIL)
    const seen = member.page.getByRole('form', { name: 'Record retention' })
    await seen.getByText('Request records are kept 45 days').waitFor()
    expect(await seen.getByRole('button', { name: 'Save record retention' }).isDisabled()).toBe(true)
    await member.page.close()
  },
  BROWSER_TEST_MS,
)
