import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { DEFAULT_FALLBACK_STATUSES } from '../src/directory/chains'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { chat, data } from './support/budgets'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  shots,
  signIn,
  startConsoleWorld,
} from './support/console'

/**
 * The gateway's configuration in the console: fallback chains on the Routing page (made, reordered,
 * refused, deleted, and the step that served each call), the response cache on the overview, and the
 * weights of provider keys; as the Owner, and as a Member who may read but not change them.
 */
const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>
let world: ConsoleWorld

beforeAll(async () => {
  // A provider key's base URL is held to the egress policy: the fake provider listens on loopback.
  if (browserAvailable) world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

interface Chain {
  id: string
  name: string
  match: { model: string }
  steps: Array<{ model: string; provider?: string; providerKeyId?: string; timeoutMs?: number }>
  on: { statusCodes: number[]; timeout: boolean; networkError: boolean }
}

const chains = async () =>
  data<Chain[]>(await world.h.request('GET', '/v1/gateway/fallback-chains', { token: world.ownerSession }))

/** What the checks read in the page, typed here: the tests are compiled without the DOM's types. */
interface PageWindow {
  document: { activeElement: unknown }
}

const isFocused = (element: Locator) =>
  element.evaluate((node) => node === (globalThis as unknown as PageWindow).document.activeElement)

const card = (page: Page, name: string) => page.getByRole('article', { name: `Chain ${name}` })
const step = (form: Locator, at: number) => form.getByRole('group', { name: `Step ${at}`, exact: true })

describe.skipIf(!browserAvailable)('routing, the response cache and key weights in the console, in chromium', () => {
  test(
    "the overview shows the response cache's hit rate and saving of its window",
    async () => {
      const cached = { headers: { 'Gw-Cache-Enabled': 'true' } }
      expect((await chat(world.h, world.apiKey, cached)).headers.get('gw-cache')).toBe('MISS')
      expect((await chat(world.h, world.apiKey, cached)).headers.get('gw-cache')).toBe('HIT')
      await world.h.requestLog.flush()
      const { page, errors } = await openPage(world.browser)
      await signIn(page, world.server.url)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const rate = page.locator('[data-figure="Cache hit rate"]')
      await rate.filter({ hasText: '50%' }).waitFor()
      expect(await page.locator('[data-figure="Requests"]').textContent()).toBe('2')
      // The hit saved what the first call cost: gpt-4o at the fake's usage, $0.0075.
      expect(await page.locator('[data-figure-note="Cache hit rate"]').textContent()).toBe('1 hit, $0.0075 saved')
      await shots(page, 'routing-overview-cache')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'the Owner adds provider keys with weights, sees each share, and changes a weight',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Provider keys')
      const add = page.getByRole('form', { name: 'New provider key' })
      for (const [name, weight] of [
        ['main openai', '3'],
        ['spare openai', '0'],
      ] as const) {
        await add.getByLabel('Name').fill(name)
        await add.getByLabel('Secret').fill(`sk-${name.replace(' ', '-')}-0123456789`)
        await add.getByLabel('Base URL (optional)').fill(world.fake.openaiBaseUrl)
        await add.getByLabel('Weight (0 to 1000; 0: standby)').fill(weight)
        await add.getByRole('button', { name: 'Add key' }).click()
        await page.getByRole('cell', { name, exact: true }).waitFor()
      }
      const row = (name: string) => page.getByRole('table', { name: 'Provider keys' }).locator('tr').filter({ hasText: name })
      expect(await row('main openai').getByRole('spinbutton', { name: 'Weight of main openai' }).inputValue()).toBe('3')
      expect(await row('main openai').locator('[data-share]').textContent()).toBe('100% of openai calls')
      expect(await row('spare openai').locator('[data-share]').textContent()).toContain('standby')
      // Saving is offered once the weight differs from the key's.
      const save = row('spare openai').getByRole('button', { name: 'Save the weight of spare openai' })
      expect(await save.isDisabled()).toBe(true)
      await row('spare openai').getByRole('spinbutton', { name: 'Weight of spare openai' }).fill('1')
      await save.click()
      await row('main openai').locator('[data-share]').filter({ hasText: '75% of openai calls' }).waitFor()
      expect(await row('spare openai').locator('[data-share]').textContent()).toBe('25% of openai calls')
      const keys = await data<Array<{ name: string; weight: number }>>(
        await world.h.request('GET', '/v1/api-keys/provider-keys', { token: world.ownerSession }),
      )
      expect(Object.fromEntries(keys.map((key) => [key.name, key.weight]))).toEqual({ 'main openai': 3, 'spare openai': 1 })
      await shots(page, 'routing-provider-key-weights')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    "the Owner makes a chain, reorders its steps from the keyboard, is shown the API's refusals, sees which step served a call, and deletes a chain",
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Routing')
      await page.getByText('No fallback chains').waitFor()

      const form = page.getByRole('form', { name: 'New fallback chain' })
      await form.getByLabel('Name', { exact: true }).fill('smart chain')
      await form.getByLabel("Model the calls name (the chain's alias)").fill('smart')
      await step(form, 1).getByLabel('Model', { exact: true }).fill('gpt-4o')
      await form.getByRole('button', { name: 'Add a step' }).click()
      // The new step's model has the focus: it is typed into at once.
      await page.keyboard.type('gpt-4o-mini')
      await step(form, 2)
        .getByRole('combobox', { name: /^Provider(?! key)/ })
        .selectOption('openai')
      await step(form, 2)
        .getByRole('combobox', { name: /^Provider key/ })
        .selectOption({ label: 'main openai (openai)' })
      await step(form, 2).getByLabel('Timeout (ms, optional)').fill('20000')
      await form.getByRole('button', { name: 'Add chain' }).click()
      const smart = card(page, 'smart chain')
      await smart.waitFor()
      expect(await smart.locator('[data-step="1"]').textContent()).toBe(
        'gpt-4o-mini by openai, key main openai, 20,000 ms to answer',
      )
      // Named no statuses: the server's defaults, which the page knows as such.
      expect(await smart.getByText('the defaults: 404').count()).toBe(1)
      const [made] = await chains()
      expect(made?.steps.map((s) => s.model)).toEqual(['gpt-4o', 'gpt-4o-mini'])
      expect(made?.on.statusCodes).toEqual([...DEFAULT_FALLBACK_STATUSES])
      // The new form starts afresh.
      expect(await step(form, 1).getByLabel('Model', { exact: true }).inputValue()).toBe('')
      expect(await step(form, 2).count()).toBe(0)

      await page.getByRole('button', { name: 'Edit smart chain' }).click()
      const edit = page.getByRole('form', { name: 'Edit smart chain' })
      // The defaults are shown as an empty field: saving keeps following them.
      expect(await edit.getByLabel(/^Move on after these statuses/).inputValue()).toBe('')
      expect(await edit.getByRole('button', { name: 'Move step 1 up' }).isDisabled()).toBe(true)
      await edit.getByRole('button', { name: 'Move step 2 up' }).focus()
      await page.keyboard.press('Enter')
      expect(await step(edit, 1).getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o-mini')
      expect(
        await step(edit, 1)
          .getByRole('combobox', { name: /^Provider key/ })
          .inputValue(),
      ).toBe(made?.steps[1]?.providerKeyId ?? '')
      expect(await step(edit, 2).getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o')
      // The moved step keeps the focus (on the way it can still go), and the move is announced.
      expect(await isFocused(edit.getByRole('button', { name: 'Move step 1 down' }))).toBe(true)
      await edit.getByRole('status').filter({ hasText: 'gpt-4o-mini is now step 1 of 2.' }).waitFor()
      await edit.getByRole('button', { name: 'Add a step' }).click()
      await page.keyboard.type('gpt-4o')
      await edit.getByRole('button', { name: 'Remove step 3' }).click()
      expect(await step(edit, 3).count()).toBe(0)

      await edit.getByLabel(/^Move on after these statuses/).fill('400, 500')
      await edit.getByLabel('Retries (0 to 5; empty: none)').fill('2')
      await edit.getByRole('button', { name: 'Save chain' }).click()
      await edit.getByRole('alert').filter({ hasText: 'on.statusCodes must not hold 400' }).waitFor()
      await shots(page, 'routing-edit-refused')
      expect((await chains())[0]?.steps.map((s) => s.model)).toEqual(['gpt-4o', 'gpt-4o-mini'])
      await edit.getByLabel(/^Move on after these statuses/).fill('')
      await edit.getByRole('button', { name: 'Save chain' }).click()
      await smart.waitFor()
      const [saved] = await chains()
      expect(saved?.steps).toEqual([
        { model: 'gpt-4o-mini', provider: 'openai', providerKeyId: made?.steps[1]?.providerKeyId, timeoutMs: 20_000 },
        { model: 'gpt-4o' },
      ])
      expect(saved?.on.statusCodes).toEqual([...DEFAULT_FALLBACK_STATUSES])
      // The card is back at once, and shows the saved chain once the list is read again.
      await smart.getByText('2 per step, 200 ms to 5,000 ms apart').waitFor()

      // A second chain for the same model is the API's 409, shown beside the form.
      await form.getByLabel('Name', { exact: true }).fill('spare chain')
      await form.getByLabel("Model the calls name (the chain's alias)").fill('smart')
      await step(form, 1).getByLabel('Model', { exact: true }).fill('gpt-4o')
      await form.getByRole('button', { name: 'Add chain' }).click()
      await form.getByRole('alert').filter({ hasText: 'has a fallback chain for model "smart" already' }).waitFor()
      await form.getByLabel("Model the calls name (the chain's alias)").fill('spare')
      await form.getByRole('button', { name: 'Add chain' }).click()
      await card(page, 'spare chain').waitFor()
      await page.getByRole('button', { name: 'Delete spare chain' }).click()
      await card(page, 'spare chain').waitFor({ state: 'detached' })
      expect((await chains()).map((chain) => chain.name)).toEqual(['smart chain'])

      // The first step fails; the second serves the call.
      world.fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500' })
      const call = await chat(world.h, world.apiKey, { model: 'smart' })
      world.fake.unsteer()
      expect(call.status).toBe(200)
      await world.h.requestLog.flush()
      const requestId = call.headers.get('gw-id') as string
      await smart.getByRole('button', { name: 'Show the recent calls of smart chain' }).click()
      const calls = smart.getByRole('table', { name: 'Recent calls of smart chain' })
      const row = calls.locator('tbody tr').filter({ has: page.getByRole('button', { name: `Open request ${requestId}` }) })
      await row.waitFor()
      expect(await row.locator('[data-served-by]').getAttribute('data-served-by')).toBe('1')
      expect(await row.locator('[data-served-by]').textContent()).toBe('step 2, gpt-4o')
      expect(await smart.locator('[data-step="0"] [data-served]').textContent()).toBe('served 0 of the last 1 call')
      expect(await smart.locator('[data-step="1"] [data-served]').textContent()).toBe('served 1 of the last 1 call')
      await shots(page, 'routing')

      await row.getByRole('button', { name: `Open request ${requestId}` }).click()
      await page.getByRole('heading', { name: 'Request', exact: true }).waitFor()
      await page.getByText(requestId).first().waitFor()
      await page.getByRole('button', { name: '← Routing' }).click()
      await smart.waitFor()
      expect(
        errors.filter((error) => !/status of (400|409)/.test(error)),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    'a Member sees the chains and the calls they served, with nothing to change',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Routing', MEMBER_EMAIL)
      const smart = card(page, 'smart chain')
      await smart.waitFor()
      expect(await page.getByRole('form').count()).toBe(0)
      expect(await page.getByRole('button', { name: /^(Edit|Delete)/ }).count()).toBe(0)
      // A Member may not list provider keys: the step names its key by id.
      expect(await smart.locator('[data-step="0"]').textContent()).toContain('key ')
      await smart.getByRole('button', { name: 'Show the recent calls of smart chain' }).click()
      await smart.locator('[data-served-by="1"]').first().waitFor()
      await shots(page, 'routing-member')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
