import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness } from './support/harness'

let fake: FakeProvider
let h: Harness
beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({
    providers: providersAt(fake),
  })
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }

describe('pass-through billing (PTB) credits', () => {
  test("no credits: 402 before any provider call, in the caller's format", async () => {
    const org = await h.org()
    const before = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body })
    expect(response.status).toBe(402)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('payment_required')
    expect(response.headers.get('gw-status')).toBe('error')
    expect(fake.calls.length).toBe(before)
  })

  test('each request takes its cost from the balance, and creditsRemaining reports it', async () => {
    const org = await h.org()
    expect(await h.services.organizations.addCredits(org.orgId, 1)).toEqual({ orgId: org.orgId, creditsRemaining: 1 })
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body })
    const meta = (await (
      await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })
    ).json()) as {
      requestCost: number
      creditsRemaining: number
    }
    expect(meta.requestCost).toBeGreaterThan(0)
    expect(meta.creditsRemaining).toBeCloseTo(1 - meta.requestCost, 9)
    // The charge is written with the call's record, in the request log's batch.
    await h.requestLog.flush()
    expect((await h.store.organizations.get(org.orgId))?.creditBalanceNano).toBe(1e9 - Math.round(meta.requestCost * 1e9))
  })

  test('charges not yet written already count: the balance runs out on time, and each answer reports it', async () => {
    const org = await h.org()
    await h.services.organizations.addCredits(org.orgId, 0.01) // a call costs $0.0075 at the fake's usage
    const remaining: number[] = []
    for (let i = 0; i < 2; i++) {
      const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body })
      expect(response.status).toBe(200)
      const meta = await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })
      remaining.push(((await meta.json()) as { creditsRemaining: number }).creditsRemaining)
    }
    expect(remaining[0]).toBeCloseTo(0.0025, 9)
    expect(remaining[1]).toBeCloseTo(-0.005, 9)
    expect((await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body })).status).toBe(402)
    await h.requestLog.flush()
    expect((await h.store.organizations.get(org.orgId))?.creditBalanceNano).toBe(-5_000_000)
  })

  test('adding credits to an organisation that does not exist is refused', async () => {
    await expect(h.services.organizations.addCredits(crypto.randomUUID(), 1)).rejects.toThrow('organization not found')
  })
})
