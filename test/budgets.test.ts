import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { CALL_COST_NANO, CALL_TOKENS, chat, data, errorOf, logged, putLimit } from './support/budgets'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { BOT_TOKEN, startFakeServices } from './support/fake-services'
import { createHarness, type Harness } from './support/harness'

/**
 * Spend controls end to end, in process (SQLite, in-process counters): the routes, and calls through
 * the gateway against the fake provider. On Redis, across instances and through outages:
 * test/budgets-redis.test.ts.
 */

let fake: FakeProvider
const harnesses: Harness[] = []
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close()
})
afterAll(() => fake.close())

async function world(tier: 'free' | 'growth' = 'growth', options: Parameters<typeof createHarness>[0] = {}) {
  const h = await createHarness({ providers: providersAt(fake), ...options })
  harnesses.push(h)
  const org = await h.org(tier)
  await h.services.organizations.addCredits(org.orgId, 100)
  return { h, org }
}

const USD_PER_CALL = CALL_COST_NANO / 1e9

describe('budgets: the routes', () => {
  test('a window limit is created, changed by id, listed in the summary and deleted', async () => {
    const { h, org } = await world()
    const created = await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 12.5, window: 'month' })
    expect(created).toMatchObject({
      kind: 'window',
      scope: { kind: 'org', id: null },
      metric: 'usd',
      limit: 12.5,
      window: 'month',
      action: 'block',
    })
    const changed = await putLimit(h, org, {
      id: created.id,
      scope: { kind: 'org' },
      metric: 'usd',
      limit: 20,
      window: 'month',
      action: 'alert',
    })
    expect(changed).toMatchObject({ id: created.id, limit: 20, action: 'alert' })
    const summary = await data<Array<Record<string, unknown>>>(
      await h.request('GET', '/v1/budget/summary', { token: org.ownerSession }),
    )
    expect(summary).toHaveLength(1)
    expect(summary[0]).toMatchObject({ id: created.id, spent: 0, reserved: 0, remaining: 20, status: 'ok' })
    const deleted = await h.request('DELETE', `/v1/budget/window-limit/${created.id}`, { token: org.ownerSession })
    expect(await data(deleted)).toEqual({ id: created.id, deleted: true })
    expect((await h.request('DELETE', `/v1/budget/window-limit/${created.id}`, { token: org.ownerSession })).status).toBe(404)
  })

  test('a second limit on the same scope, metric and window is a conflict naming the first', async () => {
    const { h, org } = await world()
    const first = await putLimit(h, org, {
      scope: { kind: 'customer', id: 'acme' },
      metric: 'tokens',
      limit: 1000,
      window: 'day',
    })
    const again = await h.request('PUT', '/v1/budget/window-limit', {
      token: org.ownerSession,
      body: { scope: { kind: 'customer', id: 'acme' }, metric: 'tokens', limit: 5, window: 'day' },
    })
    expect(again.status).toBe(409)
    expect((await errorOf(again)).message).toContain(first.id)
  })

  test.each([
    [{ scope: { kind: 'org', id: 'x' }, metric: 'usd', limit: 1, window: 'day' }, 400, 'leave scope.id out'],
    [{ scope: { kind: 'planet' }, metric: 'usd', limit: 1, window: 'day' }, 400, 'scope.kind'],
    [{ scope: { kind: 'org' }, metric: 'usd', limit: -1, window: 'day' }, 400, 'limit must be a number from 0'],
    [{ scope: { kind: 'org' }, metric: 'tokens', limit: 1.5, window: 'day' }, 400, 'whole number'],
    [{ scope: { kind: 'customer' }, metric: 'usd', limit: 999_999_999_999.9987, window: 'week' }, 400, 'at most 1,000,000,000'],
    [{ scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'fortnight' }, 400, 'window must be'],
    [{ scope: { kind: 'org' }, metric: 'usd', limit: 1, window: { seconds: 0 } }, 400, 'window must be'],
    [{ scope: { kind: 'provider', id: 'nonesuch' }, metric: 'usd', limit: 1, window: 'day' }, 400, 'openai, anthropic, gemini'],
    [{ scope: { kind: 'team', id: 'no-such-team' }, metric: 'usd', limit: 1, window: 'day' }, 404, 'team not found'],
    [{ scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day', extra: 1 }, 400, 'extra'],
  ])('bad input %j is %d and stores nothing', async (body, status, message) => {
    const { h, org } = await world()
    const response = await h.request('PUT', '/v1/budget/window-limit', { token: org.ownerSession, body })
    expect(response.status).toBe(status)
    expect(JSON.stringify(await response.json())).toContain(message)
    expect(await h.store.org(org.orgId).budgetLimits.list()).toEqual([])
  })

  test('velocity limits take 10 to 3600 s of USD, and are deleted only through their own route', async () => {
    const { h, org } = await world()
    const bad = await h.request('PUT', '/v1/budget/velocity-limit', {
      token: org.ownerSession,
      body: { scope: { kind: 'org' }, maxUsd: 1, windowSeconds: 5 },
    })
    expect(bad.status).toBe(400)
    const limit = await putLimit(h, org, { scope: { kind: 'key' }, maxUsd: 2, windowSeconds: 60 }, '/v1/budget/velocity-limit')
    expect(limit).toMatchObject({
      kind: 'velocity',
      metric: 'usd',
      limit: 2,
      window: { seconds: 60 },
      scope: { kind: 'key', id: null },
    })
    expect((await h.request('DELETE', `/v1/budget/window-limit/${limit.id}`, { token: org.ownerSession })).status).toBe(404)
    expect((await h.request('DELETE', `/v1/budget/velocity-limit/${limit.id}`, { token: org.ownerSession })).status).toBe(200)
  })

  test('the member and customer shorthands set one limit each, replaced when set again', async () => {
    const { h, org } = await world()
    const member = await h.member(org.orgId, 'member')
    const first = await data<{ id: string }>(
      await h.request('PUT', `/v1/budget/member/${member.userId}`, { token: org.ownerSession, body: { limit: 5 } }),
    )
    const second = await data<{ id: string; limit: number; window: string }>(
      await h.request('PUT', `/v1/budget/member/${member.userId}`, { token: org.ownerSession, body: { limit: 7 } }),
    )
    expect(second).toMatchObject({ id: first.id, limit: 7, window: 'month' })
    expect(
      (await h.request('PUT', '/v1/budget/member/not-a-member', { token: org.ownerSession, body: { limit: 5 } })).status,
    ).toBe(404)

    await h.request('PUT', '/v1/budget/customer', { token: org.ownerSession, body: { customerId: 'acme', limit: 3 } })
    await h.request('PUT', '/v1/budget/customer', {
      token: org.ownerSession,
      body: { customerId: 'acme', metric: 'requests', limit: 100, window: 'day' },
    })
    const customers = await data<Array<{ customerId: string; metric: string }>>(
      await h.request('GET', '/v1/budget/customers', { token: org.ownerSession }),
    )
    expect(customers.map((c) => [c.customerId, c.metric]).sort()).toEqual([
      ['acme', 'requests'],
      ['acme', 'usd'],
    ])
    const removed = await h.request('DELETE', '/v1/budget/customer?customerId=acme', { token: org.ownerSession })
    expect(await data(removed)).toEqual({ customerId: 'acme', deleted: 2 })
    expect((await h.request('DELETE', '/v1/budget/customer?customerId=acme', { token: org.ownerSession })).status).toBe(404)
    // The customer may come in a JSON body too; naming none is a 400.
    await h.request('PUT', '/v1/budget/customer', { token: org.ownerSession, body: { customerId: 'globex', limit: 3 } })
    const byBody = await h.request('DELETE', '/v1/budget/customer', { token: org.ownerSession, body: { customerId: 'globex' } })
    expect(await data(byBody)).toEqual({ customerId: 'globex', deleted: 1 })
    expect((await h.request('DELETE', '/v1/budget/customer', { token: org.ownerSession })).status).toBe(400)
  })

  test('window settings take an IANA time zone, and calendar windows follow them', async () => {
    const { h, org } = await world()
    const bad = await h.request('PUT', '/v1/budget/window-settings', {
      token: org.ownerSession,
      body: { timezone: 'Mars/Olympus' },
    })
    expect(bad.status).toBe(400)
    expect((await errorOf(bad)).message).toContain('IANA')
    const set = await h.request('PUT', '/v1/budget/window-settings', {
      token: org.ownerSession,
      body: { timezone: 'Asia/Kolkata', monthStartDay: 15 },
    })
    expect(await data(set)).toEqual({ timezone: 'Asia/Kolkata', weekStart: 1, monthStartDay: 15 })
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'month' })
    const summary = await data<Array<{ windowStart: string }>>(
      await h.request('GET', '/v1/budget/summary', { token: org.ownerSession }),
    )
    // The 15th at midnight in India is 18:30 UTC on the 14th.
    expect(summary[0]?.windowStart).toMatch(/-14T18:30:00.000Z$/)
  })

  test('alert config, downgrade mappings and notices: set, read back with the budget settings, reset', async () => {
    const { h, org } = await world()
    const config = await h.request('PUT', '/v1/budget/alert-config', {
      token: org.ownerSession,
      body: { thresholds: [80, 50], channels: ['webhook'] },
    })
    expect(await data(config)).toEqual({ thresholds: [50, 80], channels: ['webhook'], configured: true })
    const badThreshold = await h.request('PUT', '/v1/budget/alert-config', {
      token: org.ownerSession,
      body: { thresholds: [150] },
    })
    expect(badThreshold.status).toBe(400)
    const mapping = await h.request('POST', '/v1/budget/downgrade-mappings', {
      token: org.ownerSession,
      body: { fromModel: 'gpt-4o*', toModel: 'gpt-4o-mini', atPercent: 80 },
    })
    expect(mapping.status).toBe(201)
    const { id } = await data<{ id: string }>(mapping)
    const summary = await data<{ alertConfig: unknown; downgradeMappings: Array<{ id: string }> }>(
      await h.request('GET', '/v1/budget/settings', { token: org.ownerSession }),
    )
    expect(summary.alertConfig).toEqual({ thresholds: [50, 80], channels: ['webhook'], configured: true })
    expect(summary.downgradeMappings.map((m) => m.id)).toEqual([id])
    expect(await data(await h.request('DELETE', '/v1/budget/alert-config', { token: org.ownerSession }))).toMatchObject({
      configured: false,
    })
    expect((await h.request('DELETE', `/v1/budget/downgrade-mappings/${id}`, { token: org.ownerSession })).status).toBe(200)
    expect((await h.request('DELETE', `/v1/budget/downgrade-mappings/${id}`, { token: org.ownerSession })).status).toBe(404)
  })

  test('a manual breach is logged and paged with the breach log; notify sends a test notice', async () => {
    const { h, org } = await world()
    for (let i = 0; i < 3; i++) {
      const response = await h.request('POST', '/v1/budget/breach', { token: org.ownerSession, body: { message: `breach ${i}` } })
      expect(response.status).toBe(201)
    }
    const first = await data<{ breaches: Array<{ message: string; kind: string }>; nextCursor: string }>(
      await h.request('GET', '/v1/budget/breaches?limit=2', { token: org.ownerSession }),
    )
    expect(first.breaches.map((b) => b.message)).toEqual(['breach 2', 'breach 1'])
    expect(first.breaches[0]?.kind).toBe('manual')
    const second = await data<{ breaches: Array<{ message: string }>; nextCursor: string | null }>(
      await h.request('GET', `/v1/budget/breaches?limit=2&cursor=${first.nextCursor}`, { token: org.ownerSession }),
    )
    expect(second).toMatchObject({ breaches: [{ message: 'breach 0' }], nextCursor: null })
    expect((await h.request('GET', '/v1/budget/breaches?cursor=nonsense', { token: org.ownerSession })).status).toBe(400)
    expect((await h.request('POST', '/v1/budget/breach', { token: org.ownerSession, body: { message: '' } })).status).toBe(400)
    expect((await h.request('POST', '/v1/budget/breach', { token: org.ownerSession, body: { limitId: 'nope' } })).status).toBe(
      404,
    )
    const notified = await h.request('POST', '/v1/budget/notify', { token: org.ownerSession, body: { message: 'hello' } })
    expect(await data(notified)).toMatchObject({ deliveries: 0 })
  })

  describe('security', () => {
    test("another organisation's limit cannot be changed or deleted, and stays as it was", async () => {
      const { h, org } = await world()
      const other = await h.org('growth')
      const limit = await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day' })
      const change = await h.request('PUT', '/v1/budget/window-limit', {
        token: other.ownerSession,
        body: { id: limit.id, scope: { kind: 'org' }, metric: 'usd', limit: 1000, window: 'day' },
      })
      expect(change.status).toBe(404)
      expect((await h.request('DELETE', `/v1/budget/window-limit/${limit.id}`, { token: other.ownerSession })).status).toBe(404)
      const [kept] = await h.store.org(org.orgId).budgetLimits.list()
      expect(kept).toMatchObject({ id: limit.id, amount: 1_000_000_000 })
      const summary = await data<unknown[]>(await h.request('GET', '/v1/budget/summary', { token: other.ownerSession }))
      expect(summary).toEqual([])
    })

    test("a limit cannot name another organisation's member, team or key", async () => {
      const { h, org } = await world()
      const other = await h.org('growth')
      const otherKey = (await h.store.org(other.orgId).apiKeys.list())[0]?.id as string
      for (const scope of [
        { kind: 'member', id: other.ownerId },
        { kind: 'key', id: otherKey },
      ]) {
        const response = await h.request('PUT', '/v1/budget/window-limit', {
          token: org.ownerSession,
          body: { scope, metric: 'usd', limit: 1, window: 'day' },
        })
        expect(response.status).toBe(404)
      }
      expect(await h.store.org(org.orgId).budgetLimits.list()).toEqual([])
    })

    test('a Member and an API key may not change budgets; without a credential it is 401', async () => {
      const { h, org } = await world()
      const member = await h.member(org.orgId, 'member')
      const body = { scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day' }
      expect((await h.request('PUT', '/v1/budget/window-limit', { token: member.sessionToken, body })).status).toBe(403)
      expect((await h.request('PUT', '/v1/budget/window-limit', { token: org.apiKey, body })).status).toBe(403)
      expect((await h.request('PUT', '/v1/budget/window-limit', { body })).status).toBe(401)
      expect((await h.request('GET', '/v1/budget/summary', { token: member.sessionToken })).status).toBe(403)
      expect(await h.store.org(org.orgId).budgetLimits.list()).toEqual([])
    })
  })
})

describe('budgets: calls through the gateway', () => {
  test('200 concurrent calls against a limit worth about 20 calls: what was spent never exceeds it', async () => {
    const { h, org } = await world()
    const limitUsd = 20 * USD_PER_CALL
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: limitUsd, window: 'day' })
    const answers = await Promise.all(Array.from({ length: 200 }, () => chat(h, org.apiKey)))
    const statuses = answers.map((r) => r.status)
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
    const refused = answers.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused.slice(0, 5)) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      const error = await errorOf(r)
      expect(error).toMatchObject({ code: 'budget_exceeded', type: 'rate_limit_error' })
      expect(error.message).toContain('the limit')
    }
    const spent = await logged(h, org.orgId)
    expect(spent.successes).toBe(statuses.filter((s) => s === 200).length)
    expect(spent.usd).toBeLessThanOrEqual(limitUsd * 1e9)

    // Then one by one until refused: spent ends within one call's worst case of the limit.
    for (let i = 0; i < 40; i++) if ((await chat(h, org.apiKey)).status === 429) break
    const after = await logged(h, org.orgId)
    expect(after.usd).toBeLessThanOrEqual(limitUsd * 1e9)
    expect(limitUsd * 1e9 - after.usd).toBeLessThan(2 * CALL_COST_NANO)
    const actions = await h.store.budgetActions.counts({
      orgId: org.orgId,
      start: new Date(0),
      end: new Date(Date.now() + 60_000),
    })
    expect(actions.find((a) => a.action === 'block')?.count).toBeGreaterThan(0)
  })

  test.each([
    ['tokens', 10 * CALL_TOKENS, 10],
    ['requests', 10, 10],
  ] as const)('a limit on %s holds under 100 concurrent calls', async (metric, limit, most) => {
    const { h, org } = await world()
    await putLimit(h, org, { scope: { kind: 'org' }, metric, limit, window: { seconds: 3600 } })
    const answers = await Promise.all(Array.from({ length: 100 }, () => chat(h, org.apiKey)))
    const spent = await logged(h, org.orgId)
    expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(most)
    expect(metric === 'tokens' ? spent.tokens : spent.successes).toBeLessThanOrEqual(limit)
  })

  test('limits on a team, a key and a customer at once: the strictest refuses, and says which', async () => {
    const { h, org } = await world()
    const teamResponse = await h.request('POST', '/v1/team', { token: org.ownerSession, body: { name: 'research' } })
    const team = await data<{ id: string }>(teamResponse)
    await h.request('POST', `/v1/team/${team.id}/members`, { token: org.ownerSession, body: { userId: org.ownerId } })
    const keyId = (await h.store.org(org.orgId).apiKeys.list())[0]?.id as string
    await putLimit(h, org, { scope: { kind: 'team', id: team.id }, metric: 'usd', limit: 10 * USD_PER_CALL, window: 'day' })
    await putLimit(h, org, { scope: { kind: 'key', id: keyId }, metric: 'usd', limit: 6 * USD_PER_CALL, window: 'day' })
    const strictest = await putLimit(h, org, { scope: { kind: 'customer' }, metric: 'requests', limit: 3, window: 'day' })
    const headers = { 'Gw-Customer-Id': 'acme' }
    const answers = await Promise.all(Array.from({ length: 30 }, () => chat(h, org.apiKey, { headers })))
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3)
    const refusal = await errorOf(answers.find((r) => r.status === 429) as Response)
    expect(refusal.message).toContain(strictest.id)
    expect(refusal.message).toContain('customer "acme"')
    // Another customer has its own three.
    expect((await chat(h, org.apiKey, { headers: { 'Gw-Customer-Id': 'globex' } })).status).toBe(200)
  })

  test("a streamed call settles at what its stream used; a refusal on /v1/messages is in Anthropic's shape", async () => {
    const { h, org } = await world()
    const limit = await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day' })
    const streamed = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'gpt-4o', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'x'.repeat(1_100) }] },
    })
    expect(streamed.status).toBe(200)
    await streamed.text()
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, streamed.headers.get('gw-id') as string)
    expect(record?.costNano).toBe(CALL_COST_NANO)
    const summary = await data<Array<{ spent: number; reserved: number }>>(
      await h.request('GET', '/v1/budget/summary', { token: org.ownerSession }),
    )
    expect(summary[0]).toMatchObject({ spent: CALL_COST_NANO / 1e9, reserved: 0 })

    await putLimit(h, org, { id: limit.id, scope: { kind: 'org' }, metric: 'usd', limit: USD_PER_CALL, window: 'day' })
    const refused = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
  })

  test('a limit of 0 refuses every call; a window of seconds starts afresh when it ends', async () => {
    const { h, org } = await world()
    const stop = await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 0, window: 'month' })
    const refused = await chat(h, org.apiKey)
    expect(refused.status).toBe(429)
    expect((await errorOf(refused)).code).toBe('budget_exceeded')
    await h.request('DELETE', `/v1/budget/window-limit/${stop.id}`, { token: org.ownerSession })

    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'requests', limit: 1, window: { seconds: 2 } })
    // Start just after a window begins, so the two calls fall in one window.
    await Bun.sleep(2_000 - (Date.now() % 2_000) + 20)
    expect((await chat(h, org.apiKey)).status).toBe(200)
    const second = await chat(h, org.apiKey)
    expect(second.status).toBe(429)
    expect(Number(second.headers.get('retry-after'))).toBeLessThanOrEqual(2)
    await Bun.sleep(2_000 - (Date.now() % 2_000) + 20)
    expect((await chat(h, org.apiKey)).status).toBe(200)
  })

  test('a restart mid-window keeps what was spent: the counters are counted in from the request log', async () => {
    const { h, org } = await world()
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'requests', limit: 3, window: 'day' })
    for (let i = 0; i < 2; i++) expect((await chat(h, org.apiKey)).status).toBe(200)
    await h.requestLog.flush()
    const restarted = await createHarness({ providers: providersAt(fake), database: h })
    harnesses.push(restarted)
    expect((await chat(restarted, org.apiKey)).status).toBe(200)
    expect((await chat(restarted, org.apiKey)).status).toBe(429)
  })

  test('a model gw has no price for is refused with price_unknown under a usd limit, and served otherwise', async () => {
    const { h, org } = await world()
    const unpriced = await chat(h, org.apiKey, { model: 'openai/local-llama' })
    expect(unpriced.status).toBe(200)
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day' })
    const refused = await chat(h, org.apiKey, { model: 'openai/local-llama' })
    expect(refused.status).toBe(409)
    expect(await errorOf(refused)).toMatchObject({ code: 'price_unknown' })
    // A limit that only alerts cannot be overshot by a call it cannot bound: the call goes.
    const [limit] = await h.store.org(org.orgId).budgetLimits.list()
    await putLimit(h, org, { id: limit?.id, scope: { kind: 'org' }, metric: 'usd', limit: 1, window: 'day', action: 'alert' })
    expect((await chat(h, org.apiKey, { model: 'openai/local-llama' })).status).toBe(200)
  })

  test('a downgrade limit at its mapping percentage serves the mapped model and says so', async () => {
    const { h, org } = await world()
    await putLimit(h, org, { scope: { kind: 'org' }, metric: 'usd', limit: 4 * USD_PER_CALL, window: 'day', action: 'downgrade' })
    await h.request('POST', '/v1/budget/downgrade-mappings', {
      token: org.ownerSession,
      body: { fromModel: 'gpt-4o', toModel: 'claude-3-5-haiku', atPercent: 50 },
    })
    expect((await chat(h, org.apiKey)).headers.get('gw-downgraded-from')).toBeNull()
    expect((await chat(h, org.apiKey)).headers.get('gw-downgraded-from')).toBeNull()
    const downgraded = await chat(h, org.apiKey)
    expect(downgraded.status).toBe(200)
    expect(downgraded.headers.get('gw-downgraded-from')).toBe('gpt-4o')
    expect(downgraded.headers.get('gw-model')).toBe('claude-3-5-haiku')
    expect(downgraded.headers.get('gw-gateway-mode')).toBe('translated')
    const body = (await downgraded.json()) as { object: string }
    expect(body.object).toBe('chat.completion')
    const meta = (await (
      await h.request('GET', `/gateway/v1/meta/${downgraded.headers.get('gw-id')}`, { token: org.apiKey })
    ).json()) as Record<string, unknown>
    expect(meta).toMatchObject({ model: 'claude-3-5-haiku', downgradedFrom: 'gpt-4o' })
    await Bun.sleep(20)
    const actions = await h.store.budgetActions.counts({
      orgId: org.orgId,
      start: new Date(0),
      end: new Date(Date.now() + 60_000),
    })
    expect(actions.find((a) => a.action === 'downgrade')).toMatchObject({ scope: 'org', count: 1 })
  })

  test('thresholds crossed and the breach are told once each, as webhook events in the outbox', async () => {
    const { h, org } = await world()
    await h.request('PUT', '/v1/budget/alert-config', {
      token: org.ownerSession,
      body: { thresholds: [50], channels: ['webhook'] },
    })
    const limit = await putLimit(h, org, { scope: { kind: 'org' }, metric: 'requests', limit: 4, window: 'day', action: 'alert' })
    for (let i = 0; i < 6; i++) expect((await chat(h, org.apiKey)).status).toBe(200)
    await Bun.sleep(50)
    const breaches = await data<{ breaches: Array<{ kind: string; limitId: string; threshold: number }> }>(
      await h.request('GET', '/v1/budget/breaches', { token: org.ownerSession }),
    )
    expect(breaches.breaches).toEqual([expect.objectContaining({ kind: 'breach', limitId: limit.id, threshold: 100 })])
  })

  test('a breach reaches Slack through the integration when the alert channels name it', async () => {
    const services = startFakeServices()
    try {
      const { h, org } = await world('growth', { integrations: services.urls })
      const integration = await h.request('POST', '/v1/integration', {
        token: org.ownerSession,
        body: { type: 'slack', settings: { botToken: BOT_TOKEN, channel: 'alerts' } },
      })
      expect(integration.status).toBeLessThan(300)
      await h.request('PUT', '/v1/budget/alert-config', {
        token: org.ownerSession,
        body: { thresholds: [], channels: ['slack'] },
      })
      const limit = await putLimit(h, org, {
        scope: { kind: 'org' },
        metric: 'requests',
        limit: 2,
        window: 'day',
        action: 'alert',
      })
      for (let i = 0; i < 3; i++) expect((await chat(h, org.apiKey)).status).toBe(200)
      for (let i = 0; i < 100 && services.slackMessages.length === 0; i++) {
        await h.services.deliverer.tick()
        await Bun.sleep(20)
      }
      expect(services.slackMessages).toEqual([{ channel: 'alerts', text: expect.stringContaining('Budget breached') }])
      expect(services.slackMessages[0]?.text).toContain(limit.id)
    } finally {
      services.stop()
    }
  })
})
