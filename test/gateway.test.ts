import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type SseEvent, SseParser } from '../src/util/sse'
import { ANTHROPIC_TEXT, type FakeProvider, OPENAI_TEXT, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

let fake: FakeProvider
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({
    providers: providersAt(fake),
    upstreamTimeoutMs: 1_000,
  })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
})
const messages = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 100,
  messages: [{ role: 'user', content }],
  ...extra,
})

async function events(response: Response): Promise<SseEvent[]> {
  const parser = new SseParser()
  const out = parser.push(new Uint8Array(await response.arrayBuffer()))
  return [...out, ...parser.end()]
}

const gwHeaders = (response: Response) => ({
  id: response.headers.get('gw-id'),
  provider: response.headers.get('gw-provider'),
  model: response.headers.get('gw-model'),
  status: response.headers.get('gw-status'),
  mode: response.headers.get('gw-gateway-mode'),
})

describe('dispatch in passthrough mode', () => {
  test('OpenAI chat to an OpenAI model: the provider answer, the Gw-* headers, the operator key upstream', async () => {
    const before = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> }
    expect(body.choices[0]?.message.content).toBe(OPENAI_TEXT.join(''))
    const headers = gwHeaders(response)
    expect(headers).toMatchObject({ provider: 'openai', model: 'gpt-4o', status: 'success', mode: 'passthrough' })
    expect(headers.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const call = fake.calls[before]
    expect(call?.path).toBe('/v1/chat/completions')
    expect(call?.headers.authorization).toBe('Bearer sk-operator')
  })

  test('Anthropic messages to a Claude model', async () => {
    const response = await h.request('POST', '/v1/messages', { token: org.apiKey, body: messages('hi') })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { content: Array<{ text: string }> }
    expect(body.content[0]?.text).toBe(ANTHROPIC_TEXT.join(''))
    expect(gwHeaders(response)).toMatchObject({ provider: 'anthropic', status: 'success', mode: 'passthrough' })
    expect(fake.calls.at(-1)?.headers['x-api-key']).toBe('sk-operator')
  })

  test('provider/model forces the provider', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { model: 'openai/llama3.1:8b' }),
    })
    expect(response.status).toBe(200)
    expect(fake.calls.at(-1)?.body.model).toBe('llama3.1:8b')
  })

  for (const path of ['/v1/completions', '/v1/embeddings', '/v1/responses']) {
    test(`${path} reaches the OpenAI-compatible provider`, async () => {
      const body =
        path === '/v1/embeddings'
          ? { model: 'text-embedding-3-small', input: 'x' }
          : path === '/v1/completions'
            ? { model: 'gpt-3.5-turbo-instruct', prompt: 'x' }
            : { model: 'gpt-4o', input: 'x' }
      const response = await h.request('POST', path, { token: org.apiKey, body })
      expect(response.status).toBe(200)
      expect(fake.calls.at(-1)?.path).toBe(path)
    })
  }

  test('a gzip-encoded provider answer comes back readable', async () => {
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('fake:gzip') })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-encoding')).toBeNull()
    expect(((await response.json()) as { object: string }).object).toBe('chat.completion')
  })
})

describe('dispatch in translated mode', () => {
  test('OpenAI chat to a Claude model: Anthropic format upstream, OpenAI format back, mode translated', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { model: 'claude-sonnet-4-5', seed: 3 }),
    })
    expect(response.status).toBe(200)
    expect(gwHeaders(response)).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      status: 'success',
      mode: 'translated',
    })
    expect(response.headers.get('gw-translation-warning')).toBe('dropped: seed')
    expect(fake.calls.at(-1)?.path).toBe('/v1/messages')
    const body = (await response.json()) as { object: string; choices: Array<{ message: { content: string } }> }
    expect(body.object).toBe('chat.completion')
    expect(body.choices[0]?.message.content).toBe(ANTHROPIC_TEXT.join(''))
    const meta = (await (
      await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })
    ).json()) as Record<string, unknown>
    expect(meta).toMatchObject({ gatewayMode: 'translated', translationWarning: 'dropped: seed' })
  })

  test('Anthropic messages to an OpenAI model, streamed: Anthropic events, then the gw frame', async () => {
    const response = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: messages('hi', { model: 'gpt-4o', stream: true }),
      headers: { 'gw-stream-meta': 'frame' },
    })
    const frames = await events(response)
    expect(frames[0]?.event).toBe('message_start')
    expect(frames.at(-2)?.event).toBe('message_stop')
    expect(frames.at(-1)?.event).toBe('gw')
    expect(JSON.parse(frames.at(-1)?.data ?? '{}')).toMatchObject({
      provider: 'openai',
      gatewayMode: 'translated',
      status: 'success',
    })
  })

  test('OpenAI chat streamed from a Claude model: the usage chunk only when the caller asks', async () => {
    const plain = await events(
      await h.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        body: chat('hi', { model: 'claude-sonnet-4-5', stream: true }),
      }),
    )
    expect(plain.some((f) => f.event === undefined && f.data.includes('"usage"'))).toBe(false)
    const asked = await events(
      await h.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        body: chat('hi', { model: 'claude-sonnet-4-5', stream: true, stream_options: { include_usage: true } }),
        headers: { 'gw-stream-meta': 'frame' },
      }),
    )
    expect(asked.some((f) => f.event === undefined && f.data.includes('"usage"'))).toBe(true)
    expect(asked.at(-2)?.data).toBe('[DONE]')
    expect(asked.at(-1)?.event).toBe('gw')
  })

  test("a provider error in translated mode comes back in the caller's format with the provider's status", async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('fake:error:529', { model: 'claude-sonnet-4-5' }),
    })
    expect(response.status).toBe(529)
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('fake provider error 529')
    expect(response.headers.get('gw-status')).toBe('error')
  })
})

describe('bad input never reaches a provider', () => {
  test('an unknown model: 400 naming it, with the Gw-* headers', async () => {
    const before = fake.calls.length
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { model: 'mystery-1' }),
    })
    expect(response.status).toBe(400)
    const body = (await response.json()) as { error: { message: string } }
    expect(body.error.message).toContain('mystery-1')
    expect(gwHeaders(response)).toMatchObject({ status: 'error', provider: 'gw' })
    expect(fake.calls.length).toBe(before)
  })

  test("malformed JSON: 400 in the caller's format", async () => {
    const response = await h.request('POST', '/v1/messages', { token: org.apiKey, body: '{oops' })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { type: string }).type).toBe('error')
    expect(response.headers.get('gw-status')).toBe('error')
  })

  test('a path that is neither a management route nor a dispatch path: 404', async () => {
    const before = fake.calls.length
    expect((await h.request('POST', '/v1/fine_tuning/jobs', { token: org.apiKey, body: chat('hi') })).status).toBe(404)
    expect(fake.calls.length).toBe(before)
  })

  test('embeddings for a Claude model cannot be translated: 400', async () => {
    const response = await h.request('POST', '/v1/embeddings', {
      token: org.apiKey,
      body: { model: 'claude-sonnet-4-5', input: 'x' },
    })
    expect(response.status).toBe(400)
  })

  test('no credentials: 401 and no provider call', async () => {
    const before = fake.calls.length
    expect((await h.request('POST', '/v1/chat/completions', { body: chat('hi') })).status).toBe(401)
    expect(fake.calls.length).toBe(before)
  })
})

describe('streaming', () => {
  test('OpenAI stream: the provider frames in order, then one gw frame, last', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { stream: true }),
      headers: { 'gw-stream-meta': 'frame' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const frames = await events(response)
    const last = frames.at(-1)
    expect(last?.event).toBe('gw')
    expect(frames.at(-2)?.data).toBe('[DONE]')
    expect(frames.filter((f) => f.event === 'gw')).toHaveLength(1)
    const meta = JSON.parse(last?.data ?? '{}') as Record<string, unknown>
    expect(meta).toMatchObject({
      requestId: response.headers.get('gw-id'),
      provider: 'openai',
      status: 'success',
      gatewayMode: 'passthrough',
    })
    // gw asked for usage, the caller did not: the extra usage chunk is not passed on.
    expect(frames.some((f) => f.data.includes('"usage"'))).toBe(false)
    expect(fake.calls.at(-1)?.body.stream_options).toEqual({ include_usage: true })
    const text = frames
      .filter((f) => f.event === undefined && f.data.startsWith('{'))
      .map((f) => (JSON.parse(f.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
      .join('')
    expect(text).toBe(OPENAI_TEXT.join(''))
  })

  test('a caller that asked for usage gets the usage chunk', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { stream: true, stream_options: { include_usage: true } }),
    })
    const frames = await events(response)
    expect(frames.some((f) => f.data.includes('"usage"') && f.event === undefined)).toBe(true)
  })

  test('Anthropic stream: passed through, then the gw frame', async () => {
    const response = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: messages('hi', { stream: true }),
      headers: { 'gw-stream-meta': 'frame' },
    })
    const frames = await events(response)
    expect(frames.at(-2)?.event).toBe('message_stop')
    expect(frames.at(-1)?.event).toBe('gw')
  })

  test('a provider that fails mid-stream: no gw frame, and the record says error', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('fake:midstream-fail', { stream: true }),
    })
    const id = response.headers.get('gw-id') as string
    const frames = await events(response)
    expect(frames.some((f) => f.event === 'gw')).toBe(false)
    await h.requestLog.flush()
    const lookup = await h.request('GET', `/gateway/v1/meta/${id}`, { token: org.apiKey })
    expect(((await lookup.json()) as { status: string }).status).toBe('error')
    expect((await h.store.requests.get(org.orgId, id))?.status).toBe('error')
  })

  test('a client that disconnects aborts the provider call', async () => {
    const before = fake.cancelledStreams
    const abort = new AbortController()
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('fake:slow:200', { stream: true }),
      signal: abort.signal,
    })
    const reader = response.body?.getReader()
    await reader?.read()
    await reader?.cancel()
    abort.abort()
    for (let i = 0; i < 50 && fake.cancelledStreams === before; i++) await Bun.sleep(20)
    expect(fake.cancelledStreams).toBeGreaterThan(before)
  })

  test('a client that disconnects is recorded as 499, not as a provider failure', async () => {
    const abort = new AbortController()
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('fake:slow:200', { stream: true }),
      signal: abort.signal,
    })
    const id = response.headers.get('gw-id') as string
    const reader = response.body?.getReader()
    await reader?.read()
    abort.abort()
    await reader?.cancel().catch(() => undefined)
    let record: Awaited<ReturnType<typeof h.store.requests.get>>
    for (let i = 0; i < 50 && !record; i++) {
      await Bun.sleep(20)
      await h.requestLog.flush()
      record = await h.store.requests.get(org.orgId, id)
    }
    expect(record).toMatchObject({ status: 'error', httpStatus: 499, error: 'the client disconnected' })
  })
})

describe('the gw frame comes only when asked', () => {
  const streamed = (headers: Record<string, string> = {}, token = org.apiKey) =>
    h.request('POST', '/v1/chat/completions', { token, body: chat('hi', { stream: true }), headers })

  test('without Gw-Stream-Meta a stream carries only the provider protocol: [DONE] is last', async () => {
    const frames = await events(await streamed())
    expect(frames.some((f) => f.event === 'gw')).toBe(false)
    expect(frames.at(-1)?.data).toBe('[DONE]')
  })

  test("an organisation's setting makes it the default, and Gw-Stream-Meta: none declines it", async () => {
    const own = await h.org()
    await h.services.organizations.addCredits(own.orgId, 10)
    const set = await h.request('POST', '/v1/organization/stream-meta-config', { token: own.ownerSession, body: { frame: true } })
    expect(set.status).toBe(200)
    expect(((await set.json()) as { data: { streamMetaFrame: boolean } }).data.streamMetaFrame).toBe(true)
    await Bun.sleep(1_100) // the gateway reads the setting through a one-second cache
    expect((await events(await streamed({}, own.apiKey))).at(-1)?.event).toBe('gw')
    expect((await events(await streamed({ 'gw-stream-meta': 'none' }, own.apiKey))).some((f) => f.event === 'gw')).toBe(false)
    // Another organisation's setting and streams are untouched.
    const other = await h.request('GET', '/v1/organization/settings', { token: org.ownerSession })
    expect(((await other.json()) as { data: { streamMetaFrame: boolean } }).data.streamMetaFrame).toBe(false)
    expect((await events(await streamed())).some((f) => f.event === 'gw')).toBe(false)
  })

  test('the setting is an owner-or-admin write: a member key is refused, a bad body is a 4xx, nothing changes', async () => {
    const refused = await h.request('POST', '/v1/organization/stream-meta-config', { token: org.apiKey, body: { frame: true } })
    expect(refused.status).toBe(403)
    const bad = await h.request('POST', '/v1/organization/stream-meta-config', {
      token: org.ownerSession,
      body: { frame: 'yes' },
    })
    expect(bad.status).toBeGreaterThanOrEqual(400)
    expect(bad.status).toBeLessThan(500)
    const settings = await h.request('GET', '/v1/organization/settings', { token: org.ownerSession })
    expect(((await settings.json()) as { data: { streamMetaFrame: boolean } }).data.streamMetaFrame).toBe(false)
  })
})

describe('a stream that fails says so in its own protocol', () => {
  test('OpenAI chunks: a provider that breaks off gets a final {"error"} chunk, and no [DONE]', async () => {
    const frames = await events(
      await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('fake:midstream-fail', { stream: true }) }),
    )
    const last = JSON.parse(frames.at(-1)?.data ?? '{}') as { error?: { message: string; type: string } }
    expect(last.error?.type).toBe('api_error')
    expect(last.error?.message).toContain('the provider stream failed')
    expect(frames.some((f) => f.data === '[DONE]')).toBe(false)
  })

  test('Anthropic events: a provider that breaks off gets a final event: error', async () => {
    const frames = await events(
      await h.request('POST', '/v1/messages', { token: org.apiKey, body: messages('fake:midstream-fail', { stream: true }) }),
    )
    expect(frames.at(-1)?.event).toBe('error')
    expect(JSON.parse(frames.at(-1)?.data ?? '{}')).toMatchObject({ type: 'error', error: { type: 'api_error' } })
  })

  test('translated: a Claude stream that breaks off reaches an OpenAI caller as an {"error"} chunk', async () => {
    const frames = await events(
      await h.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        body: chat('fake:midstream-fail', { model: 'claude-sonnet-4-5', stream: true }),
      }),
    )
    expect((JSON.parse(frames.at(-1)?.data ?? '{}') as { error?: unknown }).error).toBeDefined()
  })
})

describe("the provider's headers a caller's SDK acts on", () => {
  test("retry-after and the rate-limit and request-id headers pass on an error, translated with the caller's error type", async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('fake:error:429', { model: 'claude-sonnet-4-5' }),
    })
    expect(response.status).toBe(429)
    const body = (await response.json()) as { error: { type: string; code: string } }
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' })
  })
})

describe('slow models outlast the server idle timeout (1 s here)', () => {
  test('a non-streamed answer that takes longer than the idle timeout arrives', async () => {
    const patient = await createHarness({ database: h, providers: { openai: { apiKey: 'k', baseUrl: fake.openaiBaseUrl } } })
    const server = serveHarness(patient, { idleTimeoutSeconds: 1 })
    try {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(chat('fake:delay:2500')),
      })
      expect(response.status).toBe(200)
    } finally {
      await server.stop()
      await patient.close()
    }
  })

  test('a stream quieter than the idle timeout between frames arrives whole', async () => {
    const server = serveHarness(h, { idleTimeoutSeconds: 1 })
    try {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', 'gw-stream-meta': 'frame' },
        body: JSON.stringify(chat('fake:pause:2500', { stream: true })),
      })
      const frames = await events(response)
      expect(frames.at(-1)?.event).toBe('gw')
    } finally {
      await server.stop()
    }
  })
})

describe('upstream failures', () => {
  test('a provider 4xx/5xx is passed back with its status and Gw-Status: error', async () => {
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('fake:error:503') })
    expect(response.status).toBe(503)
    expect(response.headers.get('gw-status')).toBe('error')
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('fake provider error 503')
  })

  test('a provider that does not answer in time: 504', async () => {
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('fake:hang') })
    expect(response.status).toBe(504)
    expect(response.headers.get('gw-status')).toBe('error')
  })

  test('an unreachable provider: 502 saying so', async () => {
    const lonely = await createHarness({ providers: { openai: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1' } } })
    const o = await lonely.org()
    await lonely.services.organizations.addCredits(o.orgId, 1)
    const response = await lonely.request('POST', '/v1/chat/completions', { token: o.apiKey, body: chat('hi') })
    expect(response.status).toBe(502)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('could not be reached')
    await lonely.close()
  })
})

describe('cost, against hand-computed figures', () => {
  const metaOf = async (response: Response) =>
    (await (await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })).json()) as {
      requestCost?: number
      estimatedCost?: number
    }

  test('gpt-4o, 1,000 prompt tokens of which 400 cached, 500 completion: $0.007', async () => {
    // 600 x $2.50/M + 400 x $1.25/M + 500 x $10/M = 0.0015 + 0.0005 + 0.005
    const meta = await metaOf(await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('fake:cache') }))
    expect(meta.requestCost).toBe(0.007)
    // The fake reports fixed usage whatever the body, so the estimate's bound is tested in cost.test.ts.
    expect(meta.estimatedCost).toBeGreaterThan(0)
  })

  test('gpt-4o without cache: $0.0075', async () => {
    // 1,000 x $2.50/M + 500 x $10/M
    expect(
      (await metaOf(await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') }))).requestCost,
    ).toBe(0.0075)
  })

  test('claude-sonnet-4-5 with cache reads and writes, streamed: $0.02235', async () => {
    // 1,000 x $3/M + 2,000 read x $0.30/M + 3,000 written x $3.75/M + 500 x $15/M = 0.003 + 0.0006 + 0.01125 + 0.0075
    const response = await h.request('POST', '/v1/messages', {
      token: org.apiKey,
      body: messages('fake:cache', { stream: true }),
      headers: { 'gw-stream-meta': 'frame' },
    })
    const frames = await events(response)
    const meta = JSON.parse(frames.at(-1)?.data ?? '{}') as { requestCost: number; estimatedCost: number }
    expect(meta.requestCost).toBe(0.02235)
    expect(meta.estimatedCost).toBeGreaterThan(0)
  })

  test('a model without a price: no cost (not 0), and the record says why', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: chat('hi', { model: 'openai/local-llama' }),
    })
    const meta = await metaOf(response)
    expect(meta.requestCost).toBeUndefined()
    await h.requestLog.flush()
    const row = await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)
    expect(row?.costNano).toBeNull()
    expect(row?.costNote).toBe('no price known for openai model local-llama')
  })
})

describe('POST /v1/feedback and GET /v1/models', () => {
  test("a rating of the caller's own request is stored; the latest one counts", async () => {
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') })
    const requestId = response.headers.get('gw-id') as string
    const first = await h.request('POST', '/v1/feedback', { token: org.apiKey, body: { requestId, rating: true } })
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ data: { requestId, rating: 1 }, error: null })
    const second = await h.request('POST', '/v1/feedback', {
      token: org.apiKey,
      body: { requestId: requestId.toUpperCase(), rating: -0.5 },
    })
    expect(((await second.json()) as { data: { rating: number } }).data.rating).toBe(-0.5)
    const rows = await h.db.query<{ rating: number }>('SELECT rating FROM request_feedback WHERE request_id = $1', [requestId])
    expect(rows.map((r) => r.rating)).toEqual([-0.5])
  })

  test("another organisation's request, or one that never existed: 404", async () => {
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat('hi') })
    const other = await h.org()
    const requestId = response.headers.get('gw-id') as string
    expect((await h.request('POST', '/v1/feedback', { token: other.apiKey, body: { requestId, rating: true } })).status).toBe(404)
    expect(
      (await h.request('POST', '/v1/feedback', { token: org.apiKey, body: { requestId: crypto.randomUUID(), rating: true } }))
        .status,
    ).toBe(404)
  })

  test('bad input: 400 naming the field, and nothing stored', async () => {
    const response = await h.request('POST', '/v1/feedback', { token: org.apiKey, body: { requestId: 'nope', rating: 5 } })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('requestId')
  })

  test('models: the OpenAI list shape, only providers gw can call', async () => {
    const response = await h.request('GET', '/v1/models', { token: org.apiKey })
    const body = (await response.json()) as { object: string; data: Array<{ id: string; owned_by: string }> }
    expect(body.object).toBe('list')
    expect(body.data.find((m) => m.id === 'gpt-4o')).toMatchObject({ owned_by: 'openai' })
    expect(body.data.some((m) => m.owned_by === 'anthropic')).toBe(true)
    const keyless = await createHarness({ database: h, providers: { openai: { baseUrl: 'https://api.openai.com/v1' } } })
    const listed = (await (await keyless.request('GET', '/v1/models', { token: org.apiKey })).json()) as {
      data: Array<{ owned_by: string }>
    }
    expect(listed.data.some((m) => m.owned_by === 'openai')).toBe(false)
    await keyless.close()
  })
})

describe('POST /v1/messages/count_tokens', () => {
  test("a Claude model's count comes from its provider, with the Gw-* headers, and costs nothing", async () => {
    const response = await h.request('POST', '/v1/messages/count_tokens', {
      token: org.apiKey,
      body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(response.status).toBe(200)
    expect(fake.calls.at(-1)?.path).toBe('/v1/messages/count_tokens')
    expect(gwHeaders(response)).toMatchObject({ status: 'success', provider: 'anthropic' })
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)
    expect(record).toMatchObject({ path: '/v1/messages/count_tokens', costNano: null, estimatedCostNano: null })
  })

  test('another model is a 400 in the Anthropic error shape, and nothing is sent', async () => {
    const calls = fake.calls.length
    const response = await h.request('POST', '/v1/messages/count_tokens', {
      token: org.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(fake.calls.length).toBe(calls)
  })
})
