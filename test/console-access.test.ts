import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  OWNER_EMAIL,
  openConsolePage,
  openPage,
  PASSWORD,
  shot,
  startConsoleWorld,
} from './support/console'

const PROVIDER_SECRET = 'sk-proxy-bound-provider-key-0123456789'
const CLIENT_SECRET = 'oidc-client-secret-for-the-console-0123'
const SSO_OWNER = 'owner@sso-console.test'

let world: ConsoleWorld
let providerKeyId: string
/** An OpenID issuer on loopback, so the SSO check the page asks for never leaves the machine. */
let issuer: { url: string; stop(): void }

beforeAll(async () => {
  if (!browserAvailable) return
  // The stand-in OpenID issuer listens on loopback, which the operator allows here.
  world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: parseAllowList('127.0.0.1') }) })
  const added = await world.h.request('POST', '/v1/api-keys/provider-key', {
    token: world.ownerSession,
    body: { provider: 'openai', name: 'team openai', secret: PROVIDER_SECRET, baseUrl: world.fake.openaiBaseUrl },
  })
  expect(added.status).toBe(201)
  providerKeyId = ((await added.json()) as { data: { id: string } }).data.id
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request): Response {
      const base = new URL(request.url).origin
      if (new URL(request.url).pathname !== '/.well-known/openid-configuration') return new Response('no', { status: 404 })
      return Response.json({ issuer: base, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token` })
    },
  })
  issuer = { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
})
afterAll(async () => {
  if (!browserAvailable) return
  await world.close()
  issuer.stop()
})

const chat = (key: string) =>
  fetch(`${world.server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  })

interface KeyView {
  id: string
  name: string
  scopes: string[]
  providerKeyId: string | null
  revokedAt: string | null
}
const listedKey = async (name: string) => {
  const listed = (await (await world.h.request('GET', '/v1/api-keys', { token: world.ownerSession })).json()) as {
    data: KeyView[]
  }
  return listed.data.find((key) => key.name === name)
}

const NOT_FOUND = 'Failed to load resource: the server responded with a status of 404 (Not Found)'
const BAD_REQUEST = 'Failed to load resource: the server responded with a status of 400 (Bad Request)'
/** What the page logged besides the refusals a test provokes on purpose (the API answers "no SSO configuration" with 404). */
const unexpected = (errors: string[]) => errors.filter((error) => error !== NOT_FOUND && error !== BAD_REQUEST)

describe.skipIf(!browserAvailable)('proxy keys and single sign-on in the console', () => {
  test(
    'an owner binds a proxy key to a provider key: its secret once, calls run on that provider key, scopes change, revoking stops it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Proxy keys')
      await page.getByText('No proxy keys yet').waitFor()
      await page.getByLabel('Name', { exact: true }).fill('billing bot')
      await page.getByLabel('Provider key').selectOption(providerKeyId)
      await page.getByLabel('gateway', { exact: true }).check()
      await page.getByRole('button', { name: 'Create proxy key' }).click()
      const secret = (await page.locator('[data-secret]').textContent()) ?? ''
      expect(secret.length).toBeGreaterThan(20)
      await page.getByRole('cell', { name: 'billing bot', exact: true }).waitFor()
      expect(await page.getByRole('cell', { name: 'team openai', exact: true }).count()).toBe(1)
      await shot(page, 'proxy-key-created')

      const call = await chat(secret)
      expect(call.status).toBe(200)
      expect(world.fake.calls.at(-1)?.headers.authorization).toBe(`Bearer ${PROVIDER_SECRET}`)
      const created = await listedKey('billing bot')
      expect(created).toMatchObject({ providerKeyId, scopes: ['gateway'], revokedAt: null })

      await page.getByRole('button', { name: 'I have saved it' }).click()
      await page.locator('[data-secret]').waitFor({ state: 'detached' })
      expect(await page.content()).not.toContain(secret)
      await page.getByRole('button', { name: 'Change scopes of billing bot' }).click()
      const editor = page.getByRole('form', { name: 'Scopes of billing bot' })
      await editor.getByLabel('traffic.read', { exact: true }).check()
      await editor.getByLabel(/^Allowlist/).fill('model:gpt-4o')
      await editor.getByRole('button', { name: 'Save scopes' }).click()
      await page.getByRole('cell', { name: 'gateway, traffic.read, model:gpt-4o', exact: true }).waitFor()
      expect((await listedKey('billing bot'))?.scopes).toEqual(['gateway', 'traffic.read', 'model:gpt-4o'])
      await shot(page, 'proxy-keys')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'proxy-keys-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })

      await page.getByRole('button', { name: 'Revoke billing bot' }).click()
      await page.getByRole('cell', { name: 'revoked', exact: true }).waitFor()
      expect((await listedKey('billing bot'))?.revokedAt).not.toBeNull()
      expect((await chat(secret)).status).toBe(401)
      // A plain API key is not a proxy key: the page lists only keys bound to a provider key.
      expect(await page.getByRole('row').count()).toBe(2)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member sees the proxy keys, with no way to create, change or revoke one',
    async () => {
      const made = await world.h.request('POST', '/v1/api-keys/proxy-key', {
        token: world.ownerSession,
        body: { name: 'member-visible', providerKeyId, scopes: ['gateway'] },
      })
      expect(made.status).toBe(201)
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Proxy keys', MEMBER_EMAIL)
      await page.getByRole('cell', { name: 'member-visible', exact: true }).waitFor()
      // The Member may not read provider keys, so the binding shows as the provider key's id.
      const row = page.getByRole('row').filter({ hasText: 'member-visible' })
      await row.getByRole('cell', { name: providerKeyId, exact: true }).waitFor()
      expect(await page.getByRole('form', { name: 'New proxy key' }).count()).toBe(0)
      expect(
        await page
          .getByRole('button')
          .filter({ hasText: /Create|Revoke|Change scopes/ })
          .count(),
      ).toBe(0)
      expect(await page.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0)
      expect(await page.getByRole('link', { name: 'Single sign-on' }).count()).toBe(0)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'on Growth the SSO page gives the tier it needs and offers no form',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Single sign-on', OWNER_EMAIL)
      await page.getByText('Single sign-on needs the enterprise tier; this organization is on growth.').waitFor()
      expect(await page.getByRole('form').count()).toBe(0)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'an Enterprise owner saves SSO (the secret never shown back), tests the issuer, gets the DNS record, enforces it, and removes it; a bad domain shows the API message',
    async () => {
      const enterprise = await world.h.services.organizations.bootstrap({
        orgName: 'sso corp',
        email: SSO_OWNER,
        tier: 'enterprise',
        password: PASSWORD,
      })
      const ssoPath = `/v1/organization/${enterprise.orgId}/sso`
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Single sign-on', SSO_OWNER)
      await page.getByText('Not configured').waitFor()

      await page.getByLabel('Issuer URL').fill(issuer.url)
      await page.getByLabel('Client ID').fill('gw-console')
      await page.getByLabel('Client secret').fill(CLIENT_SECRET)
      await page.getByLabel('Email domain (optional)').fill('not a domain')
      await page.getByRole('button', { name: 'Save' }).click()
      const refusal = await world.h.request('PUT', ssoPath, {
        token: enterprise.sessionToken,
        body: { issuer: issuer.url, clientId: 'gw-console', clientSecret: CLIENT_SECRET, domain: 'not a domain' },
      })
      expect(refusal.status).toBe(400)
      const message = ((await refusal.json()) as { error: { message: string } }).error.message
      expect(await page.getByRole('alert').textContent()).toBe(message)

      await page.getByLabel('Email domain (optional)').fill('acme.example')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('status').filter({ hasText: 'Single sign-on saved' }).waitFor()
      const stored = (await (await world.h.request('GET', ssoPath, { token: enterprise.sessionToken })).json()) as {
        data: { issuer: string; clientId: string; domain: string }
      }
      expect(stored.data).toMatchObject({ issuer: issuer.url, clientId: 'gw-console', domain: 'acme.example' })

      await page.reload()
      const saved = page.getByRole('definition').filter({ hasText: 'acme.example (not verified)' })
      await saved.waitFor()
      expect(await page.getByLabel('Issuer URL').inputValue()).toBe(issuer.url)
      expect(await page.getByLabel(/^Client secret/).inputValue()).toBe('')
      expect(await page.content()).not.toContain(CLIENT_SECRET)
      expect(await page.content()).not.toContain(CLIENT_SECRET.slice(-4))

      await page.getByRole('button', { name: 'Test the issuer' }).click()
      await page.getByText('The issuer answers as expected.').waitFor()
      await page
        .getByRole('definition')
        .filter({ hasText: `${issuer.url}/token` })
        .waitFor()
      // The first check only issues the challenge: no DNS lookup happens in this test.
      await page.getByRole('button', { name: 'Verify the domain' }).click()
      await page.getByText('_gw-challenge.acme.example', { exact: true }).waitFor()
      expect(await page.getByText(/^gw-verify=[0-9a-f]{32}$/).count()).toBe(1)
      await shot(page, 'sso')
      await page.emulateMedia({ colorScheme: 'dark' })
      await shot(page, 'sso-dark')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'sso-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.emulateMedia({ colorScheme: 'light' })

      await page.getByLabel('Require single sign-on').check()
      await page.getByRole('status').filter({ hasText: 'Single sign-on is now required' }).waitFor()
      const enforced = (await (await world.h.request('GET', ssoPath, { token: enterprise.sessionToken })).json()) as {
        data: { enforced: boolean }
      }
      expect(enforced.data.enforced).toBe(true)
      await page.getByLabel('Require single sign-on').uncheck()
      await page.getByRole('status').filter({ hasText: 'Password sign-in is allowed again' }).waitFor()

      await page.getByRole('button', { name: 'Remove single sign-on' }).click()
      await page.getByText('Not configured').waitFor()
      expect((await world.h.request('GET', ssoPath, { token: enterprise.sessionToken })).status).toBe(404)
      // The browser logs every 4xx answer: reads with nothing configured (404) and the bad domain (400) alone.
      expect(unexpected(errors), errors.join('\n')).toEqual([])
      expect(errors.filter((error) => error === BAD_REQUEST)).toHaveLength(1)
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
