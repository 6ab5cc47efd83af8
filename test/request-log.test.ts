import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BodyCapture } from '../src/gateway/request-log/body-capture'
import { RequestLog } from '../src/gateway/request-log/request-log'
import { createLogger, silentLogger } from '../src/log'
import type { RequestRecord } from '../src/store/repositories/requests'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

const record = (id: string): RequestRecord => requestRecord({ id, orgId: 'org', createdAt: new Date(0) })

describe('the request log writer', () => {
  test('writes in batches, and a failed write is retried without losing a record', async () => {
    const written: string[] = []
    let failures = 1
    const log = new RequestLog(
      async (records) => {
        if (failures-- > 0) throw new Error('database away')
        written.push(...records.map((e) => e.record.id))
      },
      silentLogger,
      { batchSize: 10, flushIntervalMs: 1 },
    )
    for (let i = 0; i < 25; i++) log.record({ record: record(String(i)) })
    await log.drain()
    expect(written).toEqual(Array.from({ length: 25 }, (_, i) => String(i)))
    expect(log.snapshot()).toMatchObject({ written: 25, dropped: 0, queued: 0, failedFlushes: 1 })
  })

  test('records that arrive while a batch is being written go in the next full batches, one write at a time', async () => {
    const batches: number[] = []
    let inFlight = 0
    let release: () => void = () => undefined
    const firstWrite = new Promise<void>((resolve) => {
      release = resolve
    })
    const log = new RequestLog(
      async (entries) => {
        inFlight += 1
        expect(inFlight).toBe(1)
        if (batches.length === 0) await firstWrite
        batches.push(entries.length)
        inFlight -= 1
      },
      silentLogger,
      { batchSize: 10, flushIntervalMs: 1_000 },
    )
    for (let i = 0; i < 10; i++) log.record({ record: record(String(i)) })
    // The first batch is written and blocked; 25 more arrive meanwhile.
    for (let i = 10; i < 35; i++) log.record({ record: record(String(i)) })
    release()
    // Without waiting for the 1 s timer: the end of each full batch starts the next one.
    while (batches.length < 3) await Bun.sleep(1)
    expect(batches).toEqual([10, 10, 10])
    expect(log.snapshot()).toMatchObject({ written: 30, queued: 5 })
    await log.drain()
    expect(batches).toEqual([10, 10, 10, 5])
  })

  test('a batch holds at most batchBodyBytes of bodies, so large prompts go in smaller batches, none lost', async () => {
    const batches: string[][] = []
    const log = new RequestLog(async (entries) => void batches.push(entries.map((e) => e.record.id)), silentLogger, {
      batchSize: 100,
      batchBodyBytes: 25,
      flushIntervalMs: 1_000,
    })
    const withBody = (id: string, text: string) => ({
      record: record(id),
      bodies: { request: BodyCapture.of(text), response: new BodyCapture(), policy: { store: true, redact: false } },
    })
    log.record(withBody('a', '1234567890'))
    log.record(withBody('b', '1234567890'))
    // 30 bytes queued, more than a batch holds: written without waiting for the 1 s interval.
    log.record(withBody('c', '1234567890'))
    // A record larger than the bound still goes, alone.
    log.record(withBody('d', 'x'.repeat(40)))
    log.record({ record: record('e') })
    while (batches.length < 1) await Bun.sleep(1)
    expect(batches[0]).toEqual(['a', 'b'])
    await log.drain()
    expect(batches).toEqual([['a', 'b'], ['c'], ['d'], ['e']])
    expect(log.snapshot()).toMatchObject({ written: 5, queued: 0, dropped: 0, bodiesDropped: 0 })
  })

  test('past the body budget, records are still kept, without their bodies', async () => {
    const kept: Array<{ id: string; body: boolean }> = []
    const log = new RequestLog(
      async (entries) => void kept.push(...entries.map((e) => ({ id: e.record.id, body: e.bodies !== undefined }))),
      silentLogger,
      {
        bodyBudget: 10,
        flushIntervalMs: 1,
      },
    )
    const bodies = () => ({
      request: BodyCapture.of('12345678'),
      response: new BodyCapture(),
      policy: { store: true, redact: false },
    })
    log.record({ record: record('a'), bodies: bodies() })
    log.record({ record: record('b'), bodies: bodies() })
    await log.drain()
    expect(kept).toEqual([
      { id: 'a', body: true },
      { id: 'b', body: false },
    ])
    expect(log.snapshot()).toMatchObject({ written: 2, bodiesDropped: 1, dropped: 0 })
  })

  test('a full queue drops with a counter and a log line, never silently, and never grows past its bound', async () => {
    const lines: string[] = []
    const log = new RequestLog(
      () => new Promise(() => undefined),
      createLogger('info', (l) => lines.push(l)),
      { capacity: 5, batchSize: 100, flushIntervalMs: 1_000 },
    )
    for (let i = 0; i < 8; i++) log.record({ record: record(String(i)) })
    expect(log.snapshot()).toMatchObject({ queued: 5, dropped: 3 })
    expect(lines.some((l) => l.includes('request log queue full'))).toBe(true)
  })
})

describe('every dispatched request is recorded', () => {
  let fake: FakeProvider
  let h: Harness
  let org: Org
  beforeAll(async () => {
    fake = await startFakeProvider()
    h = await createHarness({
      providers: providersAt(fake),
    })
    org = await h.org()
    await h.services.organizations.addCredits(org.orgId, 1_000)
  })
  afterAll(async () => {
    await h.close()
    await fake.close()
  })

  test('with its user, session, customer, properties, tokens and cost', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'fake:cache' }] },
      headers: {
        'Gw-User-Id': 'alice',
        'Gw-Session-Id': 's-1',
        'Gw-Customer-Id': 'acme-corp',
        'Gw-Property-Environment': 'staging',
      },
    })
    const id = response.headers.get('gw-id') as string
    await h.requestLog.flush()
    const row = await h.store.requests.get(org.orgId, id)
    expect(row).toMatchObject({
      userId: 'alice',
      sessionId: 's-1',
      customerId: 'acme-corp',
      properties: { environment: 'staging' },
      provider: 'openai',
      model: 'gpt-4o',
      path: '/v1/chat/completions',
      gatewayMode: 'passthrough',
      status: 'success',
      httpStatus: 200,
      promptTokens: 1_000,
      completionTokens: 500,
      cacheReadTokens: 400,
      totalTokens: 1_500,
      ptb: true,
      error: null,
    })
    expect(row?.costNano).toBe(7_000_000)
    expect(row?.estimatedCostNano).toBeGreaterThan(0)
    // The customer is shown and filtered on like the user.
    const found = await h.request('POST', '/v1/request/query', {
      token: org.apiKey,
      body: { filter: { request: { customer_id: { equals: 'acme-corp' } } } },
    })
    const { requests } = ((await found.json()) as { data: { requests: Array<{ id: string; customerId: string }> } }).data
    expect(requests.map((r) => [r.id, r.customerId])).toEqual([[id, 'acme-corp']])
  })

  test('its bodies, in their own table: what was sent and what was answered', async () => {
    const sent = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: sent })
    const answered = await response.text()
    const streamed = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: { ...sent, stream: true } })
    const streamedText = await streamed.text()
    await h.requestLog.flush()
    expect(await h.store.requestBodies.get(org.orgId, response.headers.get('gw-id') as string)).toMatchObject({
      requestBody: JSON.stringify(sent),
      responseBody: answered,
      truncated: false,
    })
    const streamedBody = await h.store.requestBodies.get(org.orgId, streamed.headers.get('gw-id') as string)
    // Everything the caller was sent but the gw frame, which is made from the record itself.
    expect(streamedText.startsWith(streamedBody?.responseBody ?? 'missing')).toBe(true)
    expect(streamedBody?.responseBody).toContain('[DONE]')
    expect(await h.store.requestBodies.get('another-org', response.headers.get('gw-id') as string)).toBeUndefined()
  })

  test('a body larger than 64 KiB is kept cut, and flagged', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] },
    })
    await h.requestLog.flush()
    const stored = await h.store.requestBodies.get(org.orgId, response.headers.get('gw-id') as string)
    expect(stored?.truncated).toBe(true)
    expect(stored?.requestBody.length).toBe(64 * 1024)
  })

  test('errors are recorded too, with what went wrong', async () => {
    const response = await h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model: 'mystery', messages: [] },
    })
    await h.requestLog.flush()
    const row = await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)
    expect(row).toMatchObject({ status: 'error', httpStatus: 400, costNano: null, costNote: 'not dispatched' })
    expect(row?.error).toContain('mystery')
  })

  test('a burst of 1,000 requests leaves 1,000 rows', async () => {
    const burst = await h.org()
    await h.services.organizations.addCredits(burst.orgId, 1_000)
    const statuses = await Promise.all(
      Array.from({ length: 1_000 }, () =>
        h
          .request('POST', '/v1/chat/completions', {
            token: burst.apiKey,
            body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
          })
          .then((r) => r.status),
      ),
    )
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    await h.requestLog.drain()
    expect(await h.store.requests.countForOrg(burst.orgId)).toBe(1_000)
    expect(h.requestLog.snapshot().dropped).toBe(0)
  })
})
