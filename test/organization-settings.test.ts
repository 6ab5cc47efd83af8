import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CallSettings } from '../src/directory/call-settings'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, loggedChat, type Org } from './support/harness'

let fake: FakeProvider
let clock = Date.now()
let h: Harness
let org: Org
beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake), now: () => clock })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

type Settings = {
  name: string
  onboarding: Record<string, unknown> | null
  terms: { version: string } | null
  bodyRetention: { mode: string; days?: number }
  piiRedaction: boolean
}
const settingsOf = async (token = org.ownerSession) =>
  ((await (await h.request('GET', '/v1/organization/settings', { token })).json()) as { data: Settings }).data
const post = (path: string, body: unknown, token = org.ownerSession) => h.request('POST', path, { token, body })

const call = (content: string): Promise<string> => loggedChat(h, org.apiKey, content)

describe('organisation details, onboarding and terms', () => {
  test('rename, onboarding progress, terms accepted by a person', async () => {
    expect((await post(`/v1/organization/${org.orgId}/update`, { name: 'Acme Labs' })).status).toBe(200)
    await post('/v1/organization/onboard', { data: { useCase: 'support bot' } })
    await post('/v1/organization/update_onboarding', { step: 'keys', completed: true })
    expect((await post('/v1/organization/user/accept_terms', { version: '2026-11' }, org.apiKey)).status).toBe(400)
    expect((await post('/v1/organization/user/accept_terms', { version: '2026-11' })).status).toBe(200)
    const settings = await settingsOf()
    expect(settings).toMatchObject({
      name: 'Acme Labs',
      onboarding: { useCase: 'support bot', step: 'keys', status: 'completed' },
      terms: { version: '2026-11' },
    })
  })

  test('a Member cannot change settings: 403; bad input: 400', async () => {
    expect((await post(`/v1/organization/${org.orgId}/update`, { name: 'x' }, org.apiKey)).status).toBe(403)
    expect((await post('/v1/organization/body-retention-config', { mode: 'weeks' })).status).toBe(400)
    expect((await post('/v1/organization/body-retention-config', { mode: 'days' })).status).toBe(400)
    expect((await post('/v1/organization/body-retention-config', { mode: 'days', days: 0 })).status).toBe(400)
    expect((await settingsOf()).bodyRetention).toEqual({ mode: 'days', days: 30 })
  })
})

describe('stored bodies follow the organisation settings', () => {
  test('PII redaction on: emails, phones, cards and secrets never reach the stored body', async () => {
    await post('/v1/organization/pii-config', { redact: true })
    const id = await call('mail jane@example.com, card 4111 1111 1111 1111, key sk-proj-abcdefghijklmnopqrstuvwx')
    const stored = await h.store.requestBodies.get(org.orgId, id)
    expect(stored?.requestBody).toContain('[redacted:email]')
    expect(stored?.requestBody).not.toContain('jane@example.com')
    expect(stored?.requestBody).not.toContain('4111 1111 1111 1111')
    expect(stored?.requestBody).not.toContain('sk-proj-abcdefghijklmnopqrstuvwx')
    await post('/v1/organization/pii-config', { redact: false })
    const plain = await call('mail jane@example.com')
    expect((await h.store.requestBodies.get(org.orgId, plain))?.requestBody).toContain('jane@example.com')
  })

  test('retention "none": no body is stored, and the job deletes the ones there were', async () => {
    const before = await call('kept for now')
    await post('/v1/organization/body-retention-config', { mode: 'none' })
    const after = await call('never kept')
    expect(await h.store.requestBodies.get(org.orgId, after)).toBeUndefined()
    expect(await h.store.requests.get(org.orgId, after)).toBeDefined()
    await h.services.retention.run()
    expect(await h.store.requestBodies.get(org.orgId, before)).toBeUndefined()
  })

  test('retention in days: the job deletes bodies older than the window, and only those, only of that organisation', async () => {
    await post('/v1/organization/body-retention-config', { mode: 'days', days: 7 })
    const old = await call('old')
    const other = await h.org('growth')
    await h.services.organizations.addCredits(other.orgId, 10)
    const othersResponse = await h.request('POST', '/v1/chat/completions', {
      token: other.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] },
    })
    await h.requestLog.flush()
    clock += 6 * 24 * 3600 * 1000
    const recent = await call('recent')
    clock += 2 * 24 * 3600 * 1000
    await h.services.retention.run()
    expect(await h.store.requestBodies.get(org.orgId, old)).toBeUndefined()
    expect(await h.store.requestBodies.get(org.orgId, recent)).toBeDefined()
    // The other organisation keeps the default 30 days.
    expect(await h.store.requestBodies.get(other.orgId, othersResponse.headers.get('gw-id') as string)).toBeDefined()
  })
})

describe("the gateway's read of the call settings", () => {
  test('read once, then answered at once without a promise, until the second is up or the settings change', async () => {
    const own = await h.org()
    const settings = new CallSettings(h.store, () => clock)
    const first = settings.bodyPolicy(own.orgId)
    expect(first).toBeInstanceOf(Promise)
    // A new organisation keeps bodies, unredacted, and ends no stream with the frame unasked.
    expect(await first).toEqual({ store: true, redact: false })
    expect(settings.bodyPolicy(own.orgId)).toEqual({ store: true, redact: false })
    expect(settings.streamMetaFrame(own.orgId)).toBe(false)
    clock += 1_001
    expect(settings.streamMetaFrame(own.orgId)).toBeInstanceOf(Promise)
    await settings.streamMetaFrame(own.orgId)
    settings.forget(own.orgId)
    expect(settings.bodyPolicy(own.orgId)).toBeInstanceOf(Promise)
  })
})
