import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { PROVIDER_NAMES } from '../src/directory/providers'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  shots,
  startConsoleWorld,
} from './support/console'
import { OPENAI_TEXT } from './support/fake-provider'

/**
 * The Providers page and the provider keys form in chromium: every provider with whether the operator
 * configured it (the fake provider is the operator's OpenAI and Anthropic), the organisation's keys and
 * the models; a test call that shows the provider's answer, or its refusal word for word; a key of
 * every provider made with the fields its provider takes.
 */
const REFUSED_SECRET = 'sk-refused-by-the-provider-0123456789'
let world: ConsoleWorld

beforeAll(async () => {
  // An organisation's key may point at the fake provider, on loopback.
  if (browserAvailable)
    world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }) })
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

const card = (page: Page, label: string) => page.getByRole('article', { name: `Provider ${label}` })
const OPENAI = 'OpenAI (or any OpenAI-compatible server: vLLM, Ollama, llama.cpp)'

describe.skipIf(!browserAvailable)('the Providers page and provider keys of every provider, in chromium', () => {
  test(
    'every provider has a card: OpenAI and Anthropic configured by the operator and ready, Gemini not; models folded with prices',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Providers')
      await card(page, OPENAI).waitFor()
      expect(await page.locator('article.provider').count()).toBe(PROVIDER_NAMES.length)
      expect(await card(page, OPENAI).locator('[data-operator]').textContent()).toBe('configured')
      expect(await card(page, 'Anthropic').locator('[data-operator]').textContent()).toBe('configured')
      expect(await card(page, 'Google Gemini API').locator('[data-operator]').textContent()).toBe('not configured')
      // The ready ones come first, under their own heading.
      const ready = page.locator('h2:text-is("Ready to call") + .provider-cards article')
      const readyNames = await Promise.all((await ready.all()).map((article) => article.getAttribute('data-provider')))
      expect(readyNames).toEqual(['openai', 'anthropic'])
      const gemini = card(page, 'Google Gemini API')
      expect(await gemini.locator('[data-keys]').textContent()).toBe('0 keys add one')
      // The models are folded away until asked for; then each with its prices per million tokens.
      const models = card(page, OPENAI).getByRole('table', { name: `Models of ${OPENAI}` })
      expect(await models.isVisible()).toBe(false)
      await card(page, OPENAI)
        .getByText(/models, with prices$/)
        .click()
      const gpt4o = models.locator('tr').filter({ has: page.getByText('gpt-4o', { exact: true }) })
      expect(await gpt4o.locator('td').allTextContents()).toEqual(['gpt-4o', '16,384', '$2.50', '$10.00', 'table'])
      expect(await card(page, 'Groq').getByText('No catalogued models').textContent()).toContain('groq/<model>')
      // The link leads to the keys.
      await gemini.getByRole('link', { name: 'Provider keys (Google Gemini API)' }).click()
      await page.getByRole('heading', { name: 'Provider keys', exact: true }).waitFor()
      await page.goBack()
      await card(page, OPENAI).waitFor()
      await card(page, OPENAI)
        .getByText(/models, with prices$/)
        .click()
      await shots(page, 'providers', { dark: true })
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    "the organisation's own price is the one shown, marked as its own, beside the table's",
    async () => {
      const priced = await world.h.request('PUT', '/v1/model-prices', {
        token: world.ownerSession,
        body: { provider: 'openai', model: 'gpt-4o', inputPerMillion: 2, outputPerMillion: 8 },
      })
      expect(priced.status).toBe(200)
      const { page, errors } = await openPage(world.browser)
      try {
        await openConsolePage(page, world.server.url, 'Providers')
        await card(page, OPENAI).waitFor()
        await card(page, OPENAI)
          // gpt-4o's snapshots are billed at the organisation's gpt-4o price too.
          .getByText(/models, with prices \(\d+ of your own\)$/)
          .click()
        const models = card(page, OPENAI).getByRole('table', { name: `Models of ${OPENAI}` })
        const gpt4o = models.locator('tr').filter({ has: page.getByText('gpt-4o', { exact: true }) })
        expect(await gpt4o.locator('td').allTextContents()).toEqual(['gpt-4o', '16,384', '$2.00', '$8.00', 'yours'])
        const mini = models.locator('tr').filter({ has: page.getByText('gpt-4o-mini', { exact: true }) })
        expect((await mini.locator('td').allTextContents()).at(-1)).toBe('table')
        await shots(page, 'providers-own-price')
        expect(errors, errors.join('\n')).toEqual([])
      } finally {
        await world.h.request('DELETE', '/v1/model-prices?provider=openai&model=gpt-4o', { token: world.ownerSession })
        await page.close()
      }
    },
    BROWSER_TEST_MS,
  )

  test(
    "test connection on OpenAI makes one tiny call through the organisation's path and shows the fake's answer",
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Providers')
      const openai = card(page, OPENAI)
      const form = openai.getByRole('form', { name: `Test connection to ${OPENAI}` })
      // A model of the provider's is there to start with; another may be typed.
      expect(await form.getByLabel('Model').inputValue()).toBe('gpt-4o')
      await form.getByLabel('Model').fill('gpt-4o-mini')
      const before = world.fake.calls.length
      await form.getByRole('button', { name: 'Test connection' }).click()
      const outcome = openai.locator('[data-outcome="ok"]')
      await outcome.waitFor()
      expect(await outcome.locator('[data-answer]').textContent()).toBe(OPENAI_TEXT.join(''))
      const verdict = await outcome.locator('.verdict').textContent()
      expect(verdict).toContain('Answered')
      expect(verdict).toContain('status 200')
      expect(verdict).toMatch(/\d+ ms/)
      expect(verdict).toContain('openai/gpt-4o-mini')
      expect(verdict).toMatch(/\$0\.\d+/)
      expect(world.fake.calls.length).toBe(before + 1)
      expect(world.fake.calls.at(-1)?.body.model).toBe('gpt-4o-mini')
      await shots(page, 'providers-test-answered')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'adding a Bedrock key asks for its region and access key id, refuses to save without them, and the table shows them',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Provider keys')
      const form = page.getByRole('form', { name: 'New provider key' })
      // OpenAI's key takes no region: the form shows only the fields a provider takes.
      expect(await form.getByLabel('Region').count()).toBe(0)
      await form.getByLabel('Name').fill('aws')
      await form.getByLabel('Provider').selectOption('bedrock')
      // What was typed stays while the provider changes.
      expect(await form.getByLabel('Name').inputValue()).toBe('aws')
      await form.getByLabel('Region').waitFor()
      expect(await form.getByLabel('Access key id').isVisible()).toBe(true)
      expect(await form.getByLabel('API version (optional)').count()).toBe(0)
      expect(await form.getByLabel(/^Project/).count()).toBe(0)
      await form.getByLabel('Secret access key').fill('aws/secret+access/key0123456789abcdefghij')
      const posted: string[] = []
      const missing = (label: string) =>
        form
          .getByLabel(label)
          .evaluate((input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().endsWith('/v1/api-keys/provider-key')) posted.push(request.url())
      })
      await form.getByRole('button', { name: 'Add key' }).click()
      // The browser holds the form back: nothing is sent, and the first missing field says so.
      expect(await missing('Region')).toBe(true)
      expect(posted).toEqual([])
      await form.getByLabel('Region').fill('eu-west-1')
      await form.getByRole('button', { name: 'Add key' }).click()
      expect(await missing('Access key id')).toBe(true)
      expect(posted).toEqual([])
      await shots(page, 'provider-keys-bedrock-form')
      await form.getByLabel('Access key id').fill('AKIACONSOLETEST00001')
      await form.getByLabel('Model aliases (optional)').fill('claude-sonnet-4-5=us.anthropic.claude-sonnet-4-5-20250929-v1:0')
      await form.getByRole('button', { name: 'Add key' }).click()
      const row = page.getByRole('table', { name: 'Provider keys' }).locator('tr').filter({ hasText: 'aws' })
      await row.waitFor()
      expect(await row.locator('[data-settings]').textContent()).toBe(
        'region eu-west-1; access key id AKIACONSOLETEST00001; models: claude-sonnet-4-5 → us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      )
      expect(posted).toHaveLength(1)
      // The next form is for the same provider, empty.
      expect(await form.getByLabel('Provider').inputValue()).toBe('bedrock')
      expect(await form.getByLabel('Region').inputValue()).toBe('')

      // Azure's key needs its resource's endpoint; Vertex's is a key file, with its project and location.
      await form.getByLabel('Provider').selectOption('azure')
      expect(await form.getByLabel('Endpoint').getAttribute('required')).not.toBeNull()
      expect(await form.getByLabel('API version (optional)').isVisible()).toBe(true)
      expect(await form.getByLabel('Region').count()).toBe(0)
      await form.getByLabel('Provider').selectOption('vertex')
      expect(await form.locator('textarea[name="secret"]').isVisible()).toBe(true)
      expect(await form.getByLabel(/^Project/).isVisible()).toBe(true)
      expect(await form.getByLabel('Location (optional)').isVisible()).toBe(true)
      await shots(page, 'provider-keys-vertex-form')
      // A malformed alias is said, and nothing is sent.
      await form.getByLabel('Provider').selectOption('groq')
      await form.getByLabel('Name').fill('groq')
      await form.getByLabel('Secret').fill('gsk-console-0123456789')
      await form.getByLabel('Model aliases (optional)').fill('llama')
      await form.getByRole('button', { name: 'Add key' }).click()
      await page.getByRole('alert').filter({ hasText: '"llama" is not name=provider-name' }).waitFor()
      expect(posted).toHaveLength(1)
      await shots(page, 'provider-keys-every-provider', { dark: true })

      // The Providers page counts the new key.
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Providers', exact: true }).click()
      await card(page, 'AWS Bedrock').locator('[data-keys="1"]').waitFor()
      expect(await card(page, 'AWS Bedrock').locator('[data-operator]').textContent()).toBe('not configured')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    "a test on one of the organisation's keys that the provider refuses shows the provider's error word for word",
    async () => {
      const added = await world.h.request('POST', '/v1/api-keys/provider-key', {
        token: world.ownerSession,
        body: { provider: 'openai', name: 'refused openai', secret: REFUSED_SECRET, baseUrl: world.fake.openaiBaseUrl },
      })
      expect(added.status).toBe(201)
      world.fake.steer({ key: REFUSED_SECRET, directives: 'fake:error:401' })
      try {
        const { page, errors } = await openPage(world.browser)
        await openConsolePage(page, world.server.url, 'Providers')
        const openai = card(page, OPENAI)
        expect(await openai.locator('[data-keys]').textContent()).toBe('1 key manage')
        const form = openai.getByRole('form', { name: `Test connection to ${OPENAI}` })
        await form.getByLabel('Key').selectOption({ label: 'refused openai' })
        await form.getByRole('button', { name: 'Test connection' }).click()
        const outcome = openai.locator('[data-outcome="failed"]')
        await outcome.waitFor()
        expect(await outcome.locator('[data-error]').textContent()).toBe('fake provider error 401')
        expect(await outcome.locator('.verdict').textContent()).toContain('status 401')
        expect(world.fake.calls.at(-1)?.headers.authorization).toBe(`Bearer ${REFUSED_SECRET}`)
        await shots(page, 'providers-test-refused', { dark: true })
        expect(errors, errors.join('\n')).toEqual([])
        await page.close()
      } finally {
        world.fake.unsteer()
      }
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member reads the page and tests a connection, without the keys or a way to them',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Providers', MEMBER_EMAIL)
      const anthropic = card(page, 'Anthropic')
      await anthropic.waitFor()
      expect(await page.getByRole('link', { name: /^Provider keys/ }).count()).toBe(0)
      expect(await card(page, OPENAI).locator('[data-keys]').textContent()).toBe('1 key')
      expect(await card(page, OPENAI).getByLabel('Key').count()).toBe(0)
      const form = anthropic.getByRole('form', { name: 'Test connection to Anthropic' })
      await form.getByLabel('Model').fill('claude-sonnet-4-5')
      await form.getByRole('button', { name: 'Test connection' }).click()
      await anthropic
        .locator('[data-outcome="ok"] [data-answer]')
        .filter({ hasText: 'Hello from the fake Anthropic provider.' })
        .waitFor()
      await shots(page, 'providers-member')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
