import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MANAGEMENT_BODY_BYTES } from '../src/http/body'
import { BodyBudget } from '../src/util/read-body'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

const LIMIT = 64 * 1024
const chatOf = (bytes: number) =>
  JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(Math.max(0, bytes - 60)) }] })

/** A body sent in chunks, without a Content-Length: the limit must hold all the same. */
const chunked = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(text)
      for (let i = 0; i < bytes.length; i += 8192) controller.enqueue(bytes.subarray(i, i + 8192))
      controller.close()
    },
  })

describe('body limits', () => {
  let fake: FakeProvider
  let h: Harness
  let org: Org
  let server: { url: string; stop(): Promise<void> }
  beforeAll(async () => {
    fake = await startFakeProvider()
    h = await createHarness({ providers: providersAt(fake), maxBodyBytes: LIMIT })
    org = await h.org()
    await h.services.organizations.addCredits(org.orgId, 100)
    // Bun's own bound sits above gw's, as `gw serve` sets it: gw answers first, with a message.
    server = serveHarness(h, { maxRequestBodySize: LIMIT + 1024 * 1024 })
  })
  afterAll(async () => {
    await server.stop()
    await h.close()
    await fake.close()
  })

  const post = (path: string, body: string | ReadableStream<Uint8Array>, token = org.apiKey) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    })

  test('a gateway call under GW_MAX_BODY_BYTES is served, sent whole or in chunks', async () => {
    expect((await post('/v1/chat/completions', chatOf(LIMIT - 100))).status).toBe(200)
    expect((await post('/v1/chat/completions', chunked(chatOf(LIMIT - 100)))).status).toBe(200)
  })

  test("over it: 413 with a message that names the limit, in the caller's format, announced or chunked", async () => {
    for (const body of [chatOf(LIMIT + 1), chunked(chatOf(LIMIT + 10_000))]) {
      const response = await post('/v1/chat/completions', body)
      expect(response.status).toBe(413)
      expect(await response.json()).toMatchObject({
        error: { code: 'payload_too_large', message: `the request body is larger than this route's limit of ${LIMIT} bytes` },
      })
    }
    const anthropic = await post('/v1/messages', chatOf(LIMIT + 1))
    expect(anthropic.status).toBe(413)
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
  })

  test('an announced body over the limit is refused before the caller is even authenticated', async () => {
    const response = await post('/v1/chat/completions', chatOf(LIMIT + 1), 'gw-sk-not-a-key')
    expect(response.status).toBe(413)
  })

  test("a provider API's GET holds none of the body budget: it is answered while unfinished bodies fill it", async () => {
    // Four bodies sent in chunks and not finished hold the whole budget (four bodies of the limit).
    const senders: Array<ReadableStreamDefaultController<Uint8Array>> = []
    const held = Array.from({ length: 4 }, () =>
      post(
        '/v1/chat/completions',
        new ReadableStream<Uint8Array>({
          start(controller) {
            senders.push(controller)
            controller.enqueue(new TextEncoder().encode('{"model":"gpt-4o",'))
          },
        }),
      ),
    )
    // A fifth body waits for room, until its caller gives up: the budget is full.
    const waiting = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: chatOf(100),
      signal: AbortSignal.timeout(300),
    })
    const outcome = await waiting.then(
      () => 'answered',
      (error: Error) => error.name,
    )
    expect(outcome).toBe('TimeoutError')

    // A provider API is called on the organisation's own key.
    const own = await h.org('growth')
    const key = await h.request('POST', '/v1/api-keys/provider-key', {
      token: own.ownerSession,
      body: { provider: 'openai', name: 'own openai', secret: 'sk-own-openai-0123456789abcdef' },
    })
    expect(key.status).toBe(201)
    const listed = await fetch(`${server.url}/v1/files`, {
      headers: { authorization: `Bearer ${own.apiKey}` },
      signal: AbortSignal.timeout(3_000),
    })
    expect(listed.status).toBe(200)

    for (const sender of senders) {
      sender.enqueue(new TextEncoder().encode('"messages":[{"role":"user","content":"hi"}]}'))
      sender.close()
    }
    expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200, 200, 200])
  })

  test('management routes take at most 1 MiB, announced or chunked; the store is unchanged', async () => {
    const name = 'n'.repeat(MANAGEMENT_BODY_BYTES)
    for (const body of [JSON.stringify({ name }), chunked(JSON.stringify({ name }))]) {
      const response = await post('/v1/team', body, org.ownerSession)
      expect(response.status).toBe(413)
      expect(await response.json()).toMatchObject({ data: null, error: { code: 'payload_too_large' } })
    }
    expect(await h.store.org(org.orgId).teams.list()).toEqual([])
    expect((await post('/v1/team', JSON.stringify({ name: 'small' }), org.ownerSession)).status).toBe(201)
  })
})

describe('the body budget', () => {
  test('holds bodies while they fit, lets the next in when one is let go, in arrival order', async () => {
    const budget = new BodyBudget(100)
    const first = await budget.hold(60)
    const order: string[] = []
    const large = Promise.resolve(budget.hold(50)).then((release) => {
      order.push('large')
      return release
    })
    const small = Promise.resolve(budget.hold(10)).then((release) => {
      order.push('small')
      return release
    })
    await Bun.sleep(5)
    // The small one would fit, but the large one came first and is not overtaken.
    expect(order).toEqual([])
    first()
    ;(await large)()
    ;(await small)()
    expect(order).toEqual(['large', 'small'])
    expect(budget.inUse).toBe(0)
  })

  test('a body larger than the whole budget is let in alone', async () => {
    const budget = new BodyBudget(100)
    const huge = await budget.hold(500)
    expect(budget.inUse).toBe(500)
    huge()
    huge()
    expect(budget.inUse).toBe(0)
  })

  test('a call that waits too long is answered 503 with a Retry-After, and leaves the queue', async () => {
    const budget = new BodyBudget(100, 20)
    const held = await budget.hold(100)
    await expect(budget.hold(50)).rejects.toMatchObject({ code: 'unavailable', status: 503, retryAfterSeconds: 1 })
    held()
    const next = await budget.hold(50)
    expect(budget.inUse).toBe(50)
    next()
  })
})
