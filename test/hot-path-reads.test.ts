import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Principal } from '../src/auth/principal'
import type { OperatorProviders } from '../src/directory/providers'
import { PROVIDERS } from '../src/gateway/providers/registry'
import { CreditBalances } from '../src/gateway/steps/admission'
import { type KeyCandidate, keyCandidates } from '../src/gateway/steps/credentials'
import { createHarness, type Harness } from './support/harness'

/**
 * What a call reads on its way to the provider is answered at once, without a promise, once it is held:
 * the organisation's keys and its credit balance. The first read of each is a promise; a refusal is
 * the same whichever way it comes.
 */

let h: Harness
beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

/** The operator configured OpenAI and Anthropic at addresses of its own, and no other provider. */
const NO_OPERATOR_KEYS: OperatorProviders = {
  openai: { baseUrl: 'http://127.0.0.1:9/v1' },
  anthropic: { baseUrl: 'http://127.0.0.1:9' },
}

const principalOf = (orgId: string): Principal => ({
  kind: 'api_key',
  orgId,
  tier: 'growth',
  actorId: 'key-of-the-test',
  permissions: new Set(),
})

describe('the keys a call may run on', () => {
  test("read once, then answered at once: the organisation's own key, weighted", async () => {
    const org = await h.org('growth')
    const added = await h.request('POST', '/v1/api-keys/provider-key', {
      token: org.ownerSession,
      body: { provider: 'openai', name: 'prod', secret: 'sk-own-key-0123456789', weight: 3 },
    })
    expect(added.status).toBe(201)
    const sources = { operator: NO_OPERATOR_KEYS, orgKeys: h.services.directory.connections }
    const first = keyCandidates(sources, principalOf(org.orgId), PROVIDERS.openai, 'gpt-4o')
    expect(first).toBeInstanceOf(Promise)
    const [key] = await first
    expect(key).toMatchObject({ weight: 3, ptb: false })
    const held = keyCandidates(sources, principalOf(org.orgId), PROVIDERS.openai, 'gpt-4o') as KeyCandidate[]
    expect(held).not.toBeInstanceOf(Promise)
    expect(held.map((candidate) => candidate.id)).toEqual([key?.id as string])
  })

  test('no key of its own and none configured by the operator: 400 naming the provider, either way', async () => {
    const org = await h.org('growth')
    const sources = { operator: NO_OPERATOR_KEYS, orgKeys: h.services.directory.connections }
    await expect(keyCandidates(sources, principalOf(org.orgId), PROVIDERS.mistral, 'mistral-large-latest')).rejects.toThrow(
      'no key is configured for provider mistral',
    )
    expect(() => keyCandidates(sources, principalOf(org.orgId), PROVIDERS.mistral, 'mistral-large-latest')).toThrow(
      'no key is configured for provider mistral',
    )
  })
})

describe('the credit balance', () => {
  test('read once, then answered at once; none left is a 402 either way', async () => {
    const org = await h.org('growth')
    const credits = new CreditBalances(h.store, h.requestLog, Date.now)
    const first = credits.balance(org.orgId)
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toBe(0)
    expect(credits.balance(org.orgId)).toBe(0)
    expect(() => credits.require(org.orgId)).toThrow(expect.objectContaining({ status: 402 }))
    const other = await h.org('growth')
    await h.services.organizations.addCredits(other.orgId, 1)
    await expect(credits.require(other.orgId) as Promise<void>).resolves.toBeUndefined()
    expect(credits.require(other.orgId)).toBeUndefined()
  })
})
