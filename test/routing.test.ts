import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import type { GatewayMeta } from '../src/gateway/meta/store'
import { type SseEvent, SseParser } from '../src/util/sse'
import { ANTHROPIC_TEXT, type FakeProvider, OPENAI_TEXT, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'

let fake: FakeProvider
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake), upstreamTimeoutMs: 500 })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})
afterEach(() => fake.unsteer())

const chat = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})

async function events(response: Response): Promise<SseEvent[]> {
  const parser = new SseParser()
  return [...parser.push(new Uint8Array(await response.arrayBuffer())), ...parser.end()]
}

let aliases = 0
/** A chain for a fresh alias; answers the alias. */
async function chain(steps: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Promise<string> {
  aliases += 1
  const alias = `smart-${aliases}`
  const response = await h.request('POST', '/v1/gateway/fallback-chains', {
    token: org.ownerSession,
    body: { name: `chain ${aliases}`, match: { model: alias }, steps, ...extra },
  })
  expect(response.status).toBeLessThan(300)
  return alias
}

async function metaOf(response: Response): Promise<GatewayMeta> {
  const lookup = await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })
  return (await lookup.json()) as GatewayMeta
}

const callsTo = (since: number) => fake.calls.slice(since).map((call) => call.body.model)

describe('fallback chains', () => {
  test('a step answering 500 is followed by the next, and the attempts tell the story', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }])
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
    expect(response.status).toBe(200)
    expect(response.headers.get('gw-model')).toBe('gpt-4o')
    expect(response.headers.get('gw-attempts')).toBe('2')
    expect(callsTo(since)).toEqual(['gpt-4o-mini', 'gpt-4o'])
    const meta = await metaOf(response)
    expect(meta.attempts).toMatchObject([
      { provider: 'openai', model: 'gpt-4o-mini', httpStatus: 500 },
      { provider: 'openai', model: 'gpt-4o', httpStatus: 200 },
    ])
    expect(meta.attempts?.[0]?.error).toBeString()
    expect(meta.attempts?.[1]?.error).toBeUndefined()
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)
    expect(record?.attempts).toHaveLength(2)
    expect(record?.model).toBe('gpt-4o')
    expect(record?.status).toBe('success')

    const chains = (await (await h.request('GET', '/v1/gateway/fallback-chains', { token: org.ownerSession })).json()) as {
      data: Array<{ id: string; match: { model: string } }>
    }
    const chainId = chains.data.find((c) => c.match.model === alias)?.id as string
    const recent = await h.request('GET', `/v1/gateway/fallback-chains/${chainId}/calls`, { token: org.ownerSession })
    expect(recent.status).toBe(200)
    expect(((await recent.json()) as { data: unknown[] }).data).toMatchObject([
      { requestId: response.headers.get('gw-id'), servedBy: 1, attempts: 2, status: 'success', model: 'gpt-4o' },
    ])
    const stranger = await h.org()
    const theirs = await h.request('GET', `/v1/gateway/fallback-chains/${chainId}/calls`, { token: stranger.ownerSession })
    expect(theirs.status).toBe(404)
  })

  test('429 with Retry-After, a timeout (before the headers or after them), and a dropped connection each fall through', async () => {
    for (const directives of ['fake:error:429 fake:retry-after:1', 'fake:hang', 'fake:stall', 'fake:drop']) {
      const alias = await chain([{ model: 'gpt-4o-mini', timeoutMs: 300 }, { model: 'gpt-4o' }])
      fake.steer({ model: 'gpt-4o-mini', directives })
      const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
      expect({ directives, status: response.status }).toEqual({ directives, status: 200 })
      const meta = await metaOf(response)
      expect(meta.attempts?.map((a) => a.model)).toEqual(['gpt-4o-mini', 'gpt-4o'])
      fake.unsteer()
    }
  })

  test('a stream that drops before its first byte falls through, and the caller gets one clean stream', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }])
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:drop' })
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat(alias, { stream: true }),
    })
    expect(response.status).toBe(200)
    const text = (await events(response))
      .filter((e) => e.data !== '[DONE]')
      .map((e) => (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
      .join('')
    expect(text).toBe(OPENAI_TEXT.join(''))
    expect(response.headers.get('gw-model')).toBe('gpt-4o')
  })

  test("a stream whose first byte does not come within the step's time falls through to the next step", async () => {
    const alias = await chain([{ model: 'gpt-4o-mini', timeoutMs: 300 }, { model: 'gpt-4o' }])
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:stall' })
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias, { stream: true }) })
    expect(response.status).toBe(200)
    expect(response.headers.get('gw-model')).toBe('gpt-4o')
    expect((await events(response)).at(-1)?.data).toBe('[DONE]')
    const meta = await metaOf(response)
    expect(meta.attempts?.map((a) => [a.model, a.error ?? null])).toEqual([
      ['gpt-4o-mini', 'provider openai did not answer within 300 ms'],
      ['gpt-4o', null],
    ])
  })

  test('a stream failing after its first byte ends with an in-band error, and no fallback', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }])
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:midstream-fail' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat(alias, { stream: true }),
    })
    expect(response.status).toBe(200)
    const received = await events(response)
    expect(received.at(-1)?.data).toContain('"error"')
    expect(callsTo(since)).toEqual(['gpt-4o-mini'])
  })

  test('400 does not fall through: the caller gets the provider answer', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }])
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:400' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
    expect(response.status).toBe(400)
    expect(response.headers.get('gw-status')).toBe('error')
    expect(callsTo(since)).toEqual(['gpt-4o-mini'])
  })

  test('a retired model (404, 410) falls through without retries', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }], {
      retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    })
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:410' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
    expect(response.status).toBe(200)
    expect(callsTo(since)).toEqual(['gpt-4o-mini', 'gpt-4o'])
  })

  test('when every step fails, the last failure is the answer, with all the attempts', async () => {
    const alias = await chain([{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }])
    fake.steer({ directives: 'fake:error:503' })
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
    expect(response.status).toBe(503)
    const meta = await metaOf(response)
    expect(meta.status).toBe('error')
    expect(meta.attempts?.map((a) => [a.model, a.httpStatus])).toEqual([
      ['gpt-4o-mini', 503],
      ['gpt-4o', 503],
    ])
  })

  test('a cross-format fallback is translated, and the mode says so', async () => {
    const alias = await chain([{ model: 'gpt-4o' }, { model: 'claude-sonnet-4-5' }])
    fake.steer({ model: 'gpt-4o', directives: 'fake:error:529' })
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat(alias) })
    expect(response.status).toBe(200)
    expect(response.headers.get('gw-provider')).toBe('anthropic')
    expect(response.headers.get('gw-gateway-mode')).toBe('translated')
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> }
    expect(body.choices[0]?.message.content).toBe(ANTHROPIC_TEXT.join(''))
    expect(fake.calls.at(-1)?.path).toBe('/v1/messages')
  })

  test('an Anthropic-format stream falls back to an OpenAI model and is translated back', async () => {
    const alias = await chain([{ model: 'claude-sonnet-4-5' }, { model: 'gpt-4o' }])
    fake.steer({ model: 'claude-sonnet-4-5', directives: 'fake:error:529' })
    const response = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: { model: alias, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('gw-gateway-mode')).toBe('translated')
    const received = await events(response)
    expect(received[0]?.event).toBe('message_start')
    expect(received.at(-1)?.event).toBe('message_stop')
    const text = received
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (JSON.parse(e.data) as { delta: { text?: string } }).delta.text ?? '')
      .join('')
    expect(text).toBe(OPENAI_TEXT.join(''))
  })

  test('budgets hold each attempt and let a failed one go: only what served is counted', async () => {
    const own = await h.org('growth')
    await h.services.organizations.addCredits(own.orgId, 10)
    const limit = await h.request('PUT', '/v1/budget/window-limit', {
      token: own.ownerSession,
      body: { scope: { kind: 'org' }, metric: 'requests', limit: 2, window: 'day' },
    })
    expect(limit.status).toBe(200)
    const response = await h.request('POST', '/v1/gateway/fallback-chains', {
      token: own.ownerSession,
      body: { name: 'budgeted', match: { model: 'budgeted' }, steps: [{ model: 'gpt-4o-mini' }, { model: 'gpt-4o' }] },
    })
    expect(response.status).toBe(201)
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:503' })
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      const call = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('budgeted') })
      statuses.push(call.status)
    }
    expect(statuses).toEqual([200, 200, 429])
  })

  test('the chain only serves its alias: another model is called as it is', async () => {
    await chain([{ model: 'gpt-4o-mini' }])
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o') })
    expect(response.status).toBe(200)
    expect(callsTo(since)).toEqual(['gpt-4o'])
  })

  test("a step the caller's key may not reach is skipped", async () => {
    const alias = await chain([{ model: 'claude-sonnet-4-5' }, { model: 'gpt-4o' }])
    const created = await h.request('POST', '/v1/api-keys', { token: org.ownerSession, body: { name: 'openai only' } })
    const { id, key: limited } = ((await created.json()) as { data: { id: string; key: string } }).data
    const scoped = await h.request('PUT', `/v1/api-keys/${id}/scopes`, {
      token: org.ownerSession,
      body: { scopes: ['gateway', 'provider:openai'] },
    })
    expect(scoped.status).toBe(200)
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: limited, body: chat(alias) })
    expect(response.status).toBe(200)
    expect(callsTo(since)).toEqual(['gpt-4o'])
    const skipped = (await metaOf(response)).attempts?.[0]
    expect(skipped).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5', latencyMs: 0 })
    expect(skipped?.httpStatus).toBeUndefined()
    expect(skipped?.error).toContain('skipped')
  })
})

describe('retries', () => {
  test('a step is tried again after a 500, with backoff, and serves', async () => {
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500', times: 2 })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('gpt-4o-mini'),
      headers: { 'Gw-Retry-Attempts': '2', 'Gw-Retry-Min-Delay-Ms': '20', 'Gw-Retry-Max-Delay-Ms': '40' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('gw-attempts')).toBe('3')
    const times = fake.calls.slice(since).map((call) => call.receivedAt)
    expect(times).toHaveLength(3)
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(15)
  })

  test("a provider's Retry-After longer than the cap ends the retries", async () => {
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:429 fake:retry-after:5' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('gpt-4o-mini'),
      headers: { 'Gw-Retry-Attempts': '3', 'Gw-Retry-Max-Delay-Ms': '1000' },
    })
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('5')
    expect(fake.calls.length - since).toBe(1)
  })

  test('without a chain or the headers, a failure is not retried', async () => {
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500' })
    const since = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o-mini') })
    expect(response.status).toBe(500)
    expect(fake.calls.length - since).toBe(1)
  })

  test('retry headers out of bounds are a 400 that names them, and nothing is called', async () => {
    const since = fake.calls.length
    const asked: Array<Record<string, string>> = [
      { 'Gw-Retry-Attempts': '6' },
      { 'Gw-Retry-Attempts': '-1' },
      { 'Gw-Retry-Attempts': 'many' },
      { 'Gw-Retry-Max-Delay-Ms': '30001' },
      { 'Gw-Retry-Min-Delay-Ms': '500', 'Gw-Retry-Max-Delay-Ms': '100' },
    ]
    for (const headers of asked) {
      const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o'), headers })
      expect(response.status).toBe(400)
      expect(await response.text()).toContain('gw-retry')
    }
    expect(fake.calls.length).toBe(since)
  })
})

describe('response cache', () => {
  const cached = { 'Gw-Cache-Enabled': 'true' }

  test('miss, then hit for the same body in another key order; the hit costs nothing and says what it saved', async () => {
    const since = fake.calls.length
    const first = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'cache me' }], temperature: 0 },
      headers: cached,
    })
    expect(first.headers.get('gw-cache')).toBe('MISS')
    const firstBody = await first.text()
    const second = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { temperature: 0, messages: [{ content: 'cache me', role: 'user' }], model: 'gpt-4o' },
      headers: cached,
    })
    expect(second.status).toBe(200)
    expect(second.headers.get('gw-cache')).toBe('HIT')
    expect(await second.text()).toBe(firstBody)
    expect(fake.calls.length - since).toBe(1)
    const meta = await metaOf(second)
    expect(meta).toMatchObject({ cached: true, requestCost: 0, model: 'gpt-4o' })
    expect(meta.cacheSavings).toBeGreaterThan(0)
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, second.headers.get('gw-id') as string)
    expect(record).toMatchObject({ cached: true, costNano: 0 })
    expect(record?.cacheSavedNano).toBeGreaterThan(0)
    const savings = await h.request('POST', '/v1/metrics/cacheSavings', { token: org.apiKey, body: {} })
    const reported = (await savings.json()) as { data: { responseCacheHits: number; responseCacheSavings: number } }
    expect(reported.data.responseCacheHits).toBeGreaterThanOrEqual(1)
    expect(reported.data.responseCacheSavings).toBeCloseTo((record?.cacheSavedNano ?? 0) / 1e9 + 0, 9)
  })

  test('a seed keeps answers apart; save without read never answers from the cache', async () => {
    const body = chat('gpt-4o', { messages: [{ role: 'user', content: 'seeded' }] })
    await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: { ...cached, 'Gw-Cache-Seed': 'a' } })
    const otherSeed = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body,
      headers: { ...cached, 'Gw-Cache-Seed': 'b' },
    })
    expect(otherSeed.headers.get('gw-cache')).toBe('MISS')
    const saveOnly = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body,
      headers: { 'Gw-Cache-Save': 'true', 'Gw-Cache-Seed': 'a' },
    })
    expect(saveOnly.headers.get('gw-cache')).toBeNull()
    const sameSeed = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body,
      headers: { 'Gw-Cache-Read': 'true', 'Gw-Cache-Seed': 'a' },
    })
    expect(sameSeed.headers.get('gw-cache')).toBe('HIT')
  })

  test('a bucket collects its answers before it serves them', async () => {
    const body = chat('gpt-4o', { messages: [{ role: 'user', content: 'bucket' }] })
    const headers = { ...cached, 'Gw-Cache-Bucket-Max-Size': '3' }
    const seen: Array<string | null> = []
    for (let i = 0; i < 5; i++) {
      const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers })
      seen.push(response.headers.get('gw-cache'))
    }
    expect(seen).toEqual(['MISS', 'MISS', 'MISS', 'HIT', 'HIT'])
  })

  test('a streamed answer is replayed as a valid stream', async () => {
    const body = chat('gpt-4o', { messages: [{ role: 'user', content: 'stream me' }], stream: true })
    const first = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: cached })
    const firstEvents = await events(first)
    const since = fake.calls.length
    const second = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body,
      headers: { ...cached, 'Gw-Stream-Meta': 'frame' },
    })
    expect(second.headers.get('gw-cache')).toBe('HIT')
    expect(second.headers.get('content-type')).toContain('text/event-stream')
    const replayed = await events(second)
    expect(replayed.slice(0, firstEvents.length)).toEqual(firstEvents)
    expect(replayed.at(-1)?.event).toBe('gw')
    expect(fake.calls.length).toBe(since)
  })

  test('a failed answer is not kept', async () => {
    const body = chat('gpt-4o-mini', { messages: [{ role: 'user', content: 'fail once' }] })
    fake.steer({ model: 'gpt-4o-mini', directives: 'fake:error:500', times: 1 })
    const failed = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: cached })
    expect(failed.status).toBe(500)
    const next = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: cached })
    expect(next.status).toBe(200)
    expect(next.headers.get('gw-cache')).toBe('MISS')
  })

  test('answers never cross organisations', async () => {
    const other = await h.org('growth')
    await h.services.organizations.addCredits(other.orgId, 10)
    const body = chat('gpt-4o', { messages: [{ role: 'user', content: 'private' }] })
    await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers: cached })
    const theirs = await h.request('POST', '/v1/chat/completions', { token: other.apiKey, body, headers: cached })
    expect(theirs.headers.get('gw-cache')).toBe('MISS')
  })

  test('malformed cache headers are a 400', async () => {
    const asked: Array<Record<string, string>> = [
      { 'Gw-Cache-Enabled': 'yes' },
      { 'Gw-Cache-Enabled': 'true', 'Gw-Cache-Bucket-Max-Size': '0' },
      { 'Gw-Cache-Enabled': 'true', 'Gw-Cache-Bucket-Max-Size': '21' },
    ]
    for (const headers of asked) {
      const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('gpt-4o'), headers })
      expect(response.status).toBe(400)
    }
  })
})

describe("load balancing between an organisation's keys", () => {
  test('a key answering 429 is skipped for its cool-down, the call served by another, and it comes back', async () => {
    const own = await h.org('growth')
    for (const [name, secret, weight] of [
      ['main', 'sk-main', 1000],
      ['spare', 'sk-spare', 1],
    ] as const) {
      const added = await h.request('POST', '/v1/api-keys/provider-key', {
        token: own.ownerSession,
        body: { provider: 'openai', name, secret, weight },
      })
      expect(added.status).toBeLessThan(300)
    }
    const keyOf = (since: number) => fake.calls.slice(since).map((call) => call.headers.authorization)
    fake.steer({ key: 'sk-main', directives: 'fake:error:429 fake:retry-after:1', times: 1 })
    let since = fake.calls.length
    const failedOver = await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('gpt-4o') })
    expect(failedOver.status).toBe(200)
    expect(keyOf(since)).toEqual(['Bearer sk-main', 'Bearer sk-spare'])
    expect(failedOver.headers.get('gw-attempts')).toBe('2')

    since = fake.calls.length
    for (let i = 0; i < 3; i++) await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('gpt-4o') })
    expect(keyOf(since)).toEqual(['Bearer sk-spare', 'Bearer sk-spare', 'Bearer sk-spare'])

    await Bun.sleep(1_100)
    since = fake.calls.length
    await h.request('POST', '/v1/chat/completions', { token: own.apiKey, body: chat('gpt-4o') })
    expect(keyOf(since)).toEqual(['Bearer sk-main'])
  })
})

describe('response cache expiry', () => {
  test("an answer is kept for the caller's max-age, then called for again", async () => {
    const body = chat('gpt-4o', { messages: [{ role: 'user', content: 'short-lived' }] })
    const headers = { 'Gw-Cache-Enabled': 'true', 'Cache-Control': 'max-age=1' }
    await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers })
    const hit = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers })
    expect(hit.headers.get('gw-cache')).toBe('HIT')
    await Bun.sleep(1_100)
    const expired = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body, headers })
    expect(expired.headers.get('gw-cache')).toBe('MISS')
  })
})
