import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { TEST_OUTPUT_TOKENS, TEST_PROPERTY } from '../src/modules/traffic/gateway-test'
import { type FakeProvider, OPENAI_TEXT, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'

let fake: FakeProvider
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  // An organisation's own key may point at the fake provider, on loopback.
  const loopback = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>
  h = await createHarness({
    providers: providersAt(fake),
    countryHeader: 'cf-ipcountry',
    egress: new EgressPolicy({ enabled: true, allow: loopback }),
  })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 10)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

type Outcome = {
  ok: boolean
  requestId: string
  httpStatus: number
  provider: string
  model: string
  cost: number | null
  answer: string | null
  error: string | null
}
const selfTest = (body: unknown, token = org.apiKey) => h.request('POST', '/v1/test/gateway-request', { token, body })
const outcome = async (body: unknown, token = org.apiKey) => {
  const response = await selfTest(body, token)
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: Outcome }).data
}

describe('POST /v1/test/gateway-request', () => {
  test("one small call through the organisation's own path: the provider answers, the call is priced and logged as a test", async () => {
    const before = fake.calls.length
    const result = await outcome({ model: 'gpt-4o' })
    expect(result).toMatchObject({ ok: true, httpStatus: 200, provider: 'openai', answer: OPENAI_TEXT.join(''), error: null })
    expect(result.cost).toBeGreaterThan(0)
    expect(fake.calls.length).toBe(before + 1)
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, result.requestId)
    expect(record?.properties).toEqual({ [TEST_PROPERTY]: 'true' })
  })

  test("the reply is capped in the field the model's provider reads, with room for a reasoning model's thinking", async () => {
    // OpenAI's reasoning models refuse max_tokens; OpenAI takes max_completion_tokens for every model.
    for (const model of ['o4-mini', 'gpt-4o', 'openai/o3']) {
      expect((await outcome({ model })).ok).toBe(true)
      const sent = fake.calls.at(-1)?.body
      expect(sent?.max_completion_tokens).toBe(TEST_OUTPUT_TOKENS)
      expect(sent).not.toHaveProperty('max_tokens')
    }
    // Translated, the cap becomes the provider's own field.
    expect((await outcome({ model: 'anthropic/claude-sonnet-4-5' })).ok).toBe(true)
    expect(fake.calls.at(-1)?.body.max_tokens).toBe(TEST_OUTPUT_TOKENS)
  })

  test('a failing provider is reported as the outcome, not as an error of the route', async () => {
    const result = await outcome({ model: 'gpt-4o', prompt: 'fake:error:503' })
    expect(result).toMatchObject({ ok: false, httpStatus: 503, answer: null })
    expect(result.error).toBeString()
  })

  test('any <provider>/<model>: Anthropic through the chat path, translated, its answer read back', async () => {
    const result = await outcome({ model: 'anthropic/claude-sonnet-4-5' })
    expect(result).toMatchObject({ ok: true, provider: 'anthropic', answer: 'Hello from the fake Anthropic provider.' })
    expect(fake.calls.at(-1)?.path).toBe('/v1/messages')
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

describe("POST /v1/test/gateway-request on one of the organisation's own keys (providerKeyId)", () => {
  const OWN_SECRET = 'sk-own-openai-0123456789abcdef'
  const GROQ_SECRET = 'gsk-own-groq-0123456789abcdef'
  let openaiKey: string
  let groqKey: string
  let other: Org

  const addKey = async (who: Org, body: Record<string, unknown>) => {
    const response = await h.request('POST', '/v1/api-keys/provider-key', { token: who.ownerSession, body })
    expect(response.status).toBe(201)
    return ((await response.json()) as { data: { id: string } }).data.id
  }

  beforeAll(async () => {
    openaiKey = await addKey(org, { provider: 'openai', name: 'own', secret: OWN_SECRET, baseUrl: fake.openaiBaseUrl })
    // Groq speaks OpenAI's API: the fake stands in for it at the key's own address.
    groqKey = await addKey(org, { provider: 'groq', name: 'groq', secret: GROQ_SECRET, baseUrl: fake.openaiBaseUrl })
    other = await h.org('growth')
  })

  test("the call runs on that key, not on the operator's, and answers what the provider said", async () => {
    const result = await outcome({ model: 'gpt-4o', providerKeyId: openaiKey }, org.ownerSession)
    expect(result).toMatchObject({ ok: true, httpStatus: 200, provider: 'openai', answer: OPENAI_TEXT.join('') })
    expect(fake.calls.at(-1)?.headers.authorization).toBe(`Bearer ${OWN_SECRET}`)
    // Run on the organisation's own key, the call is not billed to credits.
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, result.requestId)
    expect(record?.ptb).toBe(false)
    expect(record?.properties).toEqual({ [TEST_PROPERTY]: 'true' })
  })

  test("a model named without a provider goes to the key's provider: any provider's model can be tested", async () => {
    const result = await outcome({ model: 'llama-3.3-70b-versatile', providerKeyId: groqKey }, org.ownerSession)
    expect(result).toMatchObject({ ok: true, provider: 'groq', answer: OPENAI_TEXT.join('') })
    const call = fake.calls.at(-1)
    expect(call?.headers.authorization).toBe(`Bearer ${GROQ_SECRET}`)
    expect(call?.body.model).toBe('llama-3.3-70b-versatile')
    // Another OpenAI-compatible vendor reads max_tokens (some refuse the newer name).
    expect(call?.body.max_tokens).toBe(TEST_OUTPUT_TOKENS)
    expect(call?.body).not.toHaveProperty('max_completion_tokens')
    expect((await outcome({ model: 'groq/llama-3.3-70b-versatile', providerKeyId: groqKey })).provider).toBe('groq')
  })

  test("the provider's refusal of the key is the outcome, its message as the provider wrote it", async () => {
    fake.steer({ key: GROQ_SECRET, directives: 'fake:error:401' })
    try {
      const result = await outcome({ model: 'groq/llama-3.3-70b-versatile', providerKeyId: groqKey })
      expect(result).toMatchObject({ ok: false, httpStatus: 401, answer: null, error: 'fake provider error 401' })
    } finally {
      fake.unsteer()
    }
  })

  test("a model of another provider than the key's is refused before any call (400)", async () => {
    const before = fake.calls.length
    const response = await selfTest({ model: 'anthropic/claude-sonnet-4-5', providerKeyId: groqKey })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('is a groq key')
    expect(fake.calls.length).toBe(before)
  })

  test("another organisation's key, or no such key: 404, and nothing is called", async () => {
    const theirs = await addKey(other, { provider: 'openai', name: 'theirs', secret: 'sk-theirs-0123456789abcdef' })
    const before = fake.calls.length
    for (const providerKeyId of [theirs, 'no-such-key']) {
      const response = await selfTest({ model: 'gpt-4o', providerKeyId })
      expect(response.status).toBe(404)
    }
    expect(fake.calls.length).toBe(before)
    // The other organisation tests its own key, which answers.
    const mine = await outcome({ model: 'gpt-4o', providerKeyId: theirs }, other.ownerSession)
    expect(mine.ok).toBe(true)
    expect(fake.calls.at(-1)?.headers.authorization).toBe('Bearer sk-theirs-0123456789abcdef')
  })

  test('a proxy key tests its own provider key only (403 for another)', async () => {
    const created = await h.request('POST', '/v1/api-keys/proxy-key', {
      token: org.ownerSession,
      body: { providerKeyId: groqKey, name: 'contractor', scopes: ['gateway', 'traffic.read'] },
    })
    expect(created.status).toBe(201)
    const proxy = ((await created.json()) as { data: { key: string } }).data.key
    expect((await selfTest({ model: 'gpt-4o', providerKeyId: openaiKey }, proxy)).status).toBe(403)
    const own = await outcome({ model: 'llama-3.3-70b-versatile', providerKeyId: groqKey }, proxy)
    expect(own).toMatchObject({ ok: true, provider: 'groq' })
  })

  test('a providerKeyId that is no string, or empty, is 400', async () => {
    expect((await selfTest({ model: 'gpt-4o', providerKeyId: '' })).status).toBe(400)
    expect((await selfTest({ model: 'gpt-4o', providerKeyId: 7 })).status).toBe(400)
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
