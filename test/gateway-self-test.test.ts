import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { TEST_PROPERTY } from '../src/modules/traffic/gateway-test'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'

let fake: FakeProvider
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake), countryHeader: 'cf-ipcountry' })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 10)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

type Outcome = { ok: boolean; requestId: string; httpStatus: number; provider: string; cost: number | null; error: string | null }
const selfTest = (body: unknown, token = org.apiKey) => h.request('POST', '/v1/test/gateway-request', { token, body })
const outcome = async (body: unknown) => {
  const response = await selfTest(body)
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: Outcome }).data
}

describe('POST /v1/test/gateway-request', () => {
  test("one small call through the organisation's own path: the provider answers, the call is priced and logged as a test", async () => {
    const before = fake.calls.length
    const result = await outcome({ model: 'gpt-4o' })
    expect(result).toMatchObject({ ok: true, httpStatus: 200, provider: 'openai', error: null })
    expect(result.cost).toBeGreaterThan(0)
    expect(fake.calls.length).toBe(before + 1)
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, result.requestId)
    expect(record?.properties).toEqual({ [TEST_PROPERTY]: 'true' })
  })

  test('a failing provider is reported as the outcome, not as an error of the route', async () => {
    const result = await outcome({ model: 'gpt-4o', prompt: 'fake:error:503' })
    expect(result).toMatchObject({ ok: false, httpStatus: 503 })
    expect(result.error).toBeString()
  })

  test('an unknown model: the gateway says why', async () => {
    const result = await outcome({ model: 'no-such-model' })
    expect(result.ok).toBe(false)
    expect(result.httpStatus).toBe(400)
  })

  test('bad input is 400; a key without the gateway scope may read traffic but not make the call (403)', async () => {
    expect((await selfTest({})).status).toBe(400)
    expect((await selfTest({ model: 'gpt-4o', extra: 1 })).status).toBe(400)
    const created = await h.request('POST', '/v1/api-keys', {
      token: org.ownerSession,
      body: { name: 'dashboards', scopes: ['traffic.read'] },
    })
    const key = ((await created.json()) as { data: { key: string } }).data.key
    expect((await selfTest({ model: 'gpt-4o' }, key)).status).toBe(403)
    expect((await selfTest({ model: 'gpt-4o' }, 'gw-sk-nope')).status).toBe(401)
  })
})

describe('the caller country (GW_COUNTRY_HEADER)', () => {
  const call = async (headers: Record<string, string>) => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      headers,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    })
    await h.requestLog.flush()
    return (await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string))?.country
  }

  test("the trusted proxy's code is recorded, upper-cased; anything else is unknown, never guessed", async () => {
    expect(await call({ 'CF-IPCountry': 'de' })).toBe('DE')
    expect(await call({ 'CF-IPCountry': 'Germany' })).toBeNull()
    expect(await call({})).toBeNull()
  })

  test('without the setting no header is trusted', async () => {
    const plain = await createHarness({ database: h, providers: providersAt(fake) })
    const response = await plain.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      headers: { 'CF-IPCountry': 'FR' },
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    })
    await plain.requestLog.flush()
    expect((await plain.store.requests.get(org.orgId, response.headers.get('gw-id') as string))?.country).toBeNull()
    await plain.close()
  })
})
