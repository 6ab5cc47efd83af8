import { expect } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { type FakeProvider, providersAt, startFakeProvider } from './fake-provider'
import { createHarness, type Harness, type HarnessOptions } from './harness'
import { serveHarness } from './serve'

/**
 * The console in a real browser: Debian's chromium, driven by playwright-core, against gw serving the
 * console as `gw serve` does. Screenshots go to test-artifacts/console (git-ignored), to be looked at.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
export const SHOTS = join(import.meta.dir, '..', '..', 'test-artifacts', 'console')
export const OWNER_EMAIL = 'owner@console.test'
export const MEMBER_EMAIL = 'member@console.test'
export const PASSWORD = 'a console password'
/** A browser on two shared cores: signing in and rendering take seconds, not milliseconds. */
export const BROWSER_TEST_MS = 30_000

// CI installs chromium and requires the browser tests; a machine without it skips them loudly.
export const browserAvailable = existsSync(CHROMIUM)
if (!browserAvailable && process.env.GW_TEST_REQUIRE_SERVICES === '1')
  throw new Error(`${CHROMIUM} is missing: CI installs it (apt-get install chromium)`)

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })

/** One organisation (Growth tier, with credits) with an Owner and a Member who sign in by password. */
export interface ConsoleWorld {
  fake: FakeProvider
  h: Harness
  server: { url: string; stop(): Promise<void> }
  browser: Browser
  orgId: string
  apiKey: string
  ownerSession: string
  memberId: string
  close(): Promise<void>
}

export async function startConsoleWorld(options: HarnessOptions = {}): Promise<ConsoleWorld> {
  const fake = await startFakeProvider()
  const h = await createHarness({ providers: providersAt(fake), ...options })
  const org = await h.services.organizations.bootstrap({
    orgName: 'console',
    email: OWNER_EMAIL,
    tier: 'growth',
    password: PASSWORD,
  })
  await h.services.organizations.addCredits(org.orgId, 10)
  const member = await h.services.members.add({ orgId: org.orgId, email: MEMBER_EMAIL, role: 'member', password: PASSWORD })
  const server = serveHarness(h)
  const browser = await launchChromium()
  mkdirSync(SHOTS, { recursive: true })
  return {
    fake,
    h,
    server,
    browser,
    orgId: org.orgId,
    apiKey: org.apiKey,
    ownerSession: org.sessionToken,
    memberId: member.userId,
    async close() {
      await browser.close()
      await server.stop()
      await h.close()
      await fake.close()
    },
  }
}

/** A fresh page that records every request it makes, and every error it logs. */
export async function openPage(browser: Browser): Promise<{ page: Page; requested: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  const requested: string[] = []
  const errors: string[] = []
  page.on('request', (request) => requested.push(request.url()))
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  return { page, requested, errors }
}

export async function signIn(page: Page, baseUrl: string, email = OWNER_EMAIL, password = PASSWORD): Promise<void> {
  await page.goto(baseUrl)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** Signs in and opens one page of the console by its link in the navigation. */
export async function openConsolePage(page: Page, baseUrl: string, link: string, email = OWNER_EMAIL): Promise<void> {
  await signIn(page, baseUrl, email)
  await page.getByRole('link', { name: link, exact: true }).click()
  await page.getByRole('heading', { name: link, exact: true }).first().waitFor()
}

export const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

/** What the width check reads in the page, typed here: the tests are compiled without the DOM's types. */
interface ScrollWindow {
  innerWidth: number
  document: { documentElement: { scrollWidth: number } }
}

/**
 * A page as it is looked at: wide, and in a 420 px window that must not scroll sideways; in the dark
 * theme too when asked. The page is left wide and light, as it was.
 */
export async function shots(page: Page, name: string, { dark = false }: { dark?: boolean } = {}): Promise<void> {
  await shot(page, name)
  await page.setViewportSize({ width: 420, height: 900 })
  await shot(page, `${name}-narrow`)
  const wider = await page.evaluate(() => {
    const window = globalThis as unknown as ScrollWindow
    return window.document.documentElement.scrollWidth - window.innerWidth
  })
  expect(wider, `${name} at 420 px`).toBeLessThanOrEqual(1)
  if (dark) {
    await page.emulateMedia({ colorScheme: 'dark' })
    await shot(page, `${name}-narrow-dark`)
    await page.setViewportSize({ width: 1280, height: 800 })
    await shot(page, `${name}-dark`)
    await page.emulateMedia({ colorScheme: 'light' })
  }
  await page.setViewportSize({ width: 1280, height: 800 })
}
