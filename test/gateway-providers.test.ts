import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PROVIDER_NAMES, PROVIDERS_TABLE } from '../src/directory/providers'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * `GET /v1/gateway/providers`: every provider gw calls, as an organisation sees it. Of the operator's
 * configuration only whether each provider is configured shows: never a key, an address, a region.
 */
const OPERATOR_GEMINI_KEY = 'AIza-operator-gemini-secret-0123456789'
const OPERATOR_BEDROCK_SECRET = 'operator/bedrock+secret/0123456789abcdef'
const OPERATOR_ACCESS_KEY_ID = 'AKIAOPERATOR0000KEYID'
const OPERATOR_INTERNAL_URL = 'http://10.20.30.40:8443/internal-gemini'
const ORG_SECRET = 'sk-org-own-provider-secret-0123456789'

interface ProviderView {
  name: string
  label: string
  kind: string
  operator: { configured: boolean }
  keys: number
  models: Array<{
    id: string
    maxOutputTokens: number
    inputUsdPerMillion: number | null
    outputUsdPerMillion: number | null
    priceSource: string | null
  }>
}

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

for (const dialect of DIALECTS) {
  describe(`GET /v1/gateway/providers (${dialect})`, () => {
    let h: Harness
    let org: Org
    let other: Org

    const providers = async (token: string) => {
      const response = await h.request('GET', '/v1/gateway/providers', { token })
      expect(response.status).toBe(200)
      return ((await response.json()) as { data: ProviderView[] }).data
    }
    const byName = async (token: string) => new Map((await providers(token)).map((provider) => [provider.name, provider]))
    /** A provider's model, by the provider's name and the model's id, in a listing read with `byName`. */
    const modelsOf = (list: Map<string, ProviderView>) => (provider: string, id: string) =>
      list.get(provider)?.models.find((m) => m.id === id)
    const addKey = async (who: Org, body: Record<string, unknown>) => {
      const response = await h.request('POST', '/v1/api-keys/provider-key', { token: who.ownerSession, body })
      expect(response.status).toBe(201)
    }

    beforeAll(async () => {
      h = await createHarness({
        dialect,
        providers: {
          ...providersAt(fake),
          gemini: { apiKey: OPERATOR_GEMINI_KEY, baseUrl: OPERATOR_INTERNAL_URL },
          bedrock: {
            apiKey: OPERATOR_BEDROCK_SECRET,
            accessKeyId: OPERATOR_ACCESS_KEY_ID,
            region: 'eu-north-1',
            baseUrl: 'http://10.20.30.41:8080',
          },
        },
      })
      org = await h.org('growth')
      other = await h.org('growth')
      await addKey(org, { provider: 'openai', name: 'main', secret: ORG_SECRET })
      await addKey(org, { provider: 'openai', name: 'spare', secret: `${ORG_SECRET}-spare`, weight: 0 })
      await addKey(org, {
        provider: 'bedrock',
        name: 'aws',
        secret: `${ORG_SECRET}-aws`,
        region: 'us-west-2',
        accessKeyId: 'AKIAORGANISATION0001',
      })
      // The other organisation's keys are its own: never counted for this one.
      await addKey(other, { provider: 'openai', name: 'theirs', secret: `${ORG_SECRET}-theirs` })
      await addKey(other, { provider: 'groq', name: 'their groq', secret: `${ORG_SECRET}-groq` })
    })
    afterAll(() => h.close())

    test('every provider of the table, in its order, with its label and kind', async () => {
      const list = await providers(org.ownerSession)
      expect(list.map((provider) => provider.name)).toEqual([...PROVIDER_NAMES])
      for (const provider of list) {
        const spec = PROVIDERS_TABLE[provider.name as keyof typeof PROVIDERS_TABLE]
        expect(provider.label).toBe(spec.label)
        expect(provider.kind).toBe(spec.kind)
      }
    })

    test('whether the operator configured each: OpenAI, Anthropic, Gemini and Bedrock here, the others not', async () => {
      const list = await providers(org.ownerSession)
      const configured = list.filter((provider) => provider.operator.configured).map((provider) => provider.name)
      expect(configured).toEqual(['openai', 'anthropic', 'gemini', 'bedrock'])
    })

    test("the organisation's own keys are counted by provider; another organisation's are not", async () => {
      const mine = await byName(org.ownerSession)
      expect(mine.get('openai')?.keys).toBe(2)
      expect(mine.get('bedrock')?.keys).toBe(1)
      expect(mine.get('groq')?.keys).toBe(0)
      expect(mine.get('anthropic')?.keys).toBe(0)
      const theirs = await byName(other.ownerSession)
      expect(theirs.get('openai')?.keys).toBe(1)
      expect(theirs.get('groq')?.keys).toBe(1)
      expect(theirs.get('bedrock')?.keys).toBe(0)
    })

    test("each provider's models: its own priced rows, and the families it serves at the price it bills them", async () => {
      const list = await byName(org.ownerSession)
      const model = modelsOf(list)
      expect(model('openai', 'gpt-4o')).toEqual({
        id: 'gpt-4o',
        maxOutputTokens: 16_384,
        inputUsdPerMillion: 2.5,
        outputUsdPerMillion: 10,
        priceSource: 'builtin',
      })
      // Azure deploys OpenAI's models, Vertex serves Gemini's: at their makers' list prices.
      expect(model('azure', 'gpt-4o')).toEqual(model('openai', 'gpt-4o'))
      expect(model('gemini', 'gemini-2.5-flash')).toMatchObject({ inputUsdPerMillion: 0.3, outputUsdPerMillion: 2.5 })
      expect(model('vertex', 'gemini-2.5-flash')).toEqual(model('gemini', 'gemini-2.5-flash'))
      expect(list.get('anthropic')?.models.every((m) => m.id.startsWith('claude-'))).toBe(true)
      expect(list.get('anthropic')?.models.length).toBeGreaterThan(0)
      // No family names Groq's or Bedrock's models: they are called as <provider>/<model>.
      expect(list.get('groq')?.models).toEqual([])
      expect(list.get('bedrock')?.models).toEqual([])
    })

    test("the organisation's own prices where it set them, and the models it priced that the table lacks; another organisation sees the table's", async () => {
      const price = async (body: Record<string, unknown>) => {
        const response = await h.request('PUT', '/v1/model-prices', { token: org.ownerSession, body })
        expect(response.status).toBe(200)
        return ((await response.json()) as { data: { id: string } }).data.id
      }
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
      const own = await price({ provider: 'openai', model: 'gpt-4o', inputPerMillion: 2, outputPerMillion: 8 })
      const finetune = await price({
        provider: 'openai',
        model: 'ft:gpt-4o-mini:acme::x1',
        inputPerMillion: 0.3,
        outputPerMillion: 1.2,
        maxOutputTokens: 4096,
      })
      // Not in force yet: calls today pay the table's price, and so does the list.
      await price({
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        inputPerMillion: 1,
        outputPerMillion: 1,
        effectiveFrom: tomorrow,
      })
      try {
        const model = modelsOf(await byName(org.ownerSession))
        expect(model('openai', 'gpt-4o')).toEqual({
          id: 'gpt-4o',
          maxOutputTokens: 16_384,
          inputUsdPerMillion: 2,
          outputUsdPerMillion: 8,
          priceSource: `override:${own}`,
        })
        expect(model('openai', 'ft:gpt-4o-mini:acme::x1')).toEqual({
          id: 'ft:gpt-4o-mini:acme::x1',
          maxOutputTokens: 4096,
          inputUsdPerMillion: 0.3,
          outputUsdPerMillion: 1.2,
          priceSource: `override:${finetune}`,
        })
        expect(model('anthropic', 'claude-sonnet-4-5')?.priceSource).toBe('builtin')
        // An override is the organisation's provider's: Azure's gpt-4o keeps the table's price.
        expect(model('azure', 'gpt-4o')?.priceSource).toBe('builtin')
        const theirs = await byName(other.ownerSession)
        expect(theirs.get('openai')?.models.find((m) => m.id === 'gpt-4o')).toMatchObject({
          inputUsdPerMillion: 2.5,
          priceSource: 'builtin',
        })
        expect(theirs.get('openai')?.models.some((m) => m.id === 'ft:gpt-4o-mini:acme::x1')).toBe(false)
      } finally {
        for (const [provider, model] of [
          ['openai', 'gpt-4o'],
          ['openai', 'ft:gpt-4o-mini:acme::x1'],
          ['anthropic', 'claude-sonnet-4-5'],
        ])
          await h.request('DELETE', `/v1/model-prices?${new URLSearchParams({ provider: provider ?? '', model: model ?? '' })}`, {
            token: org.ownerSession,
          })
      }
    })

    test("no secret, address, region or key id of the operator's or the organisation's is in the answer", async () => {
      const response = await h.request('GET', '/v1/gateway/providers', { token: org.ownerSession })
      const text = await response.text()
      for (const secret of [
        OPERATOR_GEMINI_KEY,
        OPERATOR_BEDROCK_SECRET,
        OPERATOR_ACCESS_KEY_ID,
        OPERATOR_INTERNAL_URL,
        '10.20.30',
        'eu-north-1',
        'sk-operator',
        fake.url,
        '127.0.0.1',
        ORG_SECRET.slice(0, 12),
        'AKIAORGANISATION0001',
        'us-west-2',
      ])
        expect(text).not.toContain(secret)
      for (const field of ['apiKey', 'baseUrl', 'secret', 'region', 'accessKeyId']) expect(text).not.toContain(`"${field}"`)
      const operators = (JSON.parse(text) as { data: ProviderView[] }).data.map((provider) => Object.keys(provider.operator))
      expect(new Set(operators.flat())).toEqual(new Set(['configured']))
    })

    test('a Member reads it (org.read), and so does an API key; without a credential it is 401', async () => {
      const member = await h.member(org.orgId, 'member')
      const seen = await byName(member.sessionToken)
      expect(seen.get('openai')?.keys).toBe(2)
      expect(seen.get('openai')?.operator.configured).toBe(true)
      expect((await providers(org.apiKey)).length).toBe(PROVIDER_NAMES.length)
      expect((await h.request('GET', '/v1/gateway/providers')).status).toBe(401)
    })
  })
}
