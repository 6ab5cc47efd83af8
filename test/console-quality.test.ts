import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  OWNER_EMAIL,
  openPage,
  PASSWORD,
  shot,
  signIn,
  startConsoleWorld,
} from './support/console'

/**
 * What a person notices on every page, whatever the page: each control has a name a screen reader
 * says (so it can be reached and used from the keyboard), the page fits a narrow window without
 * scrolling sideways, it reads in the dark theme, and it talks to gw alone without an error.
 */
let world: ConsoleWorld

beforeAll(async () => {
  if (!browserAvailable) return
  world = await startConsoleWorld()
  for (const [user, session] of [
    ['alice', 's1'],
    ['bob', 's2'],
  ]) {
    const call = await fetch(`${world.server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${world.apiKey}`,
        'content-type': 'application/json',
        'Gw-User-Id': user as string,
        'Gw-Session-Id': session as string,
        'Gw-Property-Customer': 'acme',
      },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(call.status).toBe(200)
  }
  await world.h.requestLog.flush()
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

/** What the checks read in the page, typed here: the tests are compiled without the DOM's types. */
interface Control {
  tagName: string
  type?: string
  textContent: string | null
  outerHTML: string
  labels?: ArrayLike<{ textContent: string | null }> | null
  getAttribute(name: string): string | null
}
interface PageWindow {
  innerWidth: number
  document: {
    querySelectorAll(selector: string): ArrayLike<Control>
    getElementById(id: string): { textContent: string | null } | null
    documentElement: { scrollWidth: number }
    activeElement: unknown
  }
}

/** Controls a screen reader would announce without a name: nothing labels them. */
const unnamedControls = (page: Page) =>
  page.evaluate(() => {
    const { document } = globalThis as unknown as PageWindow
    return Array.from(document.querySelectorAll('input, select, textarea, button'))
      .filter((control) => {
        if (control.type === 'hidden') return false
        const labelledBy = control.getAttribute('aria-labelledby')
        const name =
          control.getAttribute('aria-label') ??
          (labelledBy ? document.getElementById(labelledBy)?.textContent : undefined) ??
          Array.from(control.labels ?? [])
            .map((label) => label.textContent)
            .join(' ')
        return (name ?? '').trim() === '' && (control.tagName !== 'BUTTON' || (control.textContent ?? '').trim() === '')
      })
      .map((control) => control.outerHTML.slice(0, 120))
  })

const overflow = (page: Page) =>
  page.evaluate(() => {
    const window = globalThis as unknown as PageWindow
    return window.document.documentElement.scrollWidth - window.innerWidth
  })

/** Whether an element of the page has the keyboard's focus. */
const focused = (element: Locator) =>
  element.evaluate((node) => node === (globalThis as unknown as PageWindow).document.activeElement)

describe.skipIf(!browserAvailable)('every page of the console, in chromium', () => {
  test(
    "as the Owner: each control named, every page within a 420 px window, dark theme, gw's own origin only, no error",
    async () => {
      const { page, requested, errors } = await openPage(world.browser)
      await signIn(page, world.server.url)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const pages = page.getByRole('navigation', { name: 'Pages' })
      const titles = await pages.getByRole('link').allTextContents()
      // Every page the Owner may see, and no more (features not built yet have no page).
      expect(titles).toEqual([
        'Overview',
        'Requests',
        'Sessions',
        'Users',
        'Properties',
        'Tool calls',
        'API keys',
        'Proxy keys',
        'Providers',
        'Provider keys',
        'Members',
        'Roles',
        'Teams',
        'Governance',
        'Rate limits',
        'Routing',
        'Budgets',
        'Model prices',
        'Webhooks',
        'Integrations',
        'Audit log',
        'Settings',
        'Single sign-on',
      ])
      const problems: string[] = []
      for (const title of titles) {
        await page.setViewportSize({ width: 1280, height: 800 })
        await page.emulateMedia({ colorScheme: 'light' })
        await pages.getByRole('link', { name: title, exact: true }).click()
        await page.getByRole('heading', { level: 1 }).first().waitFor()
        // Let the page's reads land before judging it.
        await page.getByText('Loading…').first().waitFor({ state: 'detached' })
        for (const control of await unnamedControls(page)) problems.push(`${title}: unnamed ${control}`)
        await page.setViewportSize({ width: 420, height: 900 })
        // Charts follow their container's width a frame after the window changes: give them a moment.
        let wider = await overflow(page)
        for (let tries = 0; wider > 1 && tries < 20; tries++) {
          await Bun.sleep(50)
          wider = await overflow(page)
        }
        if (wider > 1) problems.push(`${title}: ${wider} px wider than a 420 px window`)
        await page.emulateMedia({ colorScheme: 'dark' })
        await shot(page, `every-page-${title.toLowerCase().replaceAll(' ', '-')}-narrow-dark`)
      }
      expect(problems).toEqual([])
      // The checks themselves catch what they are about.
      await page.setContent('<input><button></button><label>Named <input></label><button>Also named</button>')
      expect(await unnamedControls(page)).toHaveLength(2)
      await page.setContent(`<pre>${'wide '.repeat(200)}</pre>`)
      expect(await overflow(page)).toBeGreaterThan(1)
      const origin = new URL(world.server.url).origin
      expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([])
      // The Growth tier has no single sign-on: the page asks and is told so, which chromium logs as a failed load.
      expect(
        errors.filter((error) => !error.includes('status of 403')),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 3,
  )

  test(
    'from the keyboard alone: sign in, reach a page by its link, make an API key',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await page.goto(world.server.url)
      await page.keyboard.press('Tab')
      await page.keyboard.type(OWNER_EMAIL)
      await page.keyboard.press('Tab')
      await page.keyboard.type(PASSWORD)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      // Tab through the controls until the API keys link has the focus, then follow it.
      const keysLink = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'API keys' })
      for (let presses = 0; presses < 40 && !(await focused(keysLink)); presses++) await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'API keys' }).waitFor()
      const name = page.getByLabel('Name')
      for (let presses = 0; presses < 40 && !(await focused(name)); presses++) await page.keyboard.press('Tab')
      await page.keyboard.type('typed, not clicked')
      await page.keyboard.press('Enter')
      await page.locator('[data-secret]').waitFor()
      await page.getByRole('cell', { name: 'typed, not clicked', exact: true }).waitFor()
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
