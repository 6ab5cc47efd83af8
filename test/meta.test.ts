import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { type MetaStore, RedisMetaStore } from '../src/gateway/meta/store'
import type { LogWriter } from '../src/gateway/request-log/request-log'
import { CALL_COST_NANO, putLimit } from './support/budgets'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { serviceUrl } from './support/services'

let fake: FakeProvider
let clock = Date.now()
let h: Harness
let a: Org
let b: Org

// The records and the lookup keep time by the same clock, as they do in gw.
const harness = (meta?: MetaStore) =>
  createHarness({
    meta,
    now: () => clock,
    providers: providersAt(fake),
  })

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await harness()
  a = await h.org()
  b = await h.org()
  await h.services.organizations.addCredits(a.orgId, 10)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

const call = async (target: Harness, token: string) => {
  const response = await target.request('POST', '/v1/chat/completions', {
    token,
    body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  })
  expect(response.status).toBe(200)
  return response.headers.get('gw-id') as string
}

describe('GET /gateway/v1/meta/{requestId} (spec 4.2)', () => {
  test("200 with GatewayMeta for the caller's own request", async () => {
    const id = await call(h, a.apiKey)
    const response = await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })
    expect(response.status).toBe(200)
    const meta = (await response.json()) as Record<string, unknown>
    expect(meta).toMatchObject({
      requestId: id,
      provider: 'openai',
      model: 'gpt-4o',
      status: 'success',
      gatewayMode: 'passthrough',
    })
    expect(typeof meta.requestCost).toBe('number')
    expect(typeof meta.estimatedCost).toBe('number')
    expect(typeof meta.creditsRemaining).toBe('number')
  })

  test('the id is matched whatever its case', async () => {
    const id = await call(h, a.apiKey)
    expect((await h.request('GET', `/gateway/v1/meta/${id.toUpperCase()}`, { token: a.apiKey })).status).toBe(200)
  })

  test('202 pending when no record exists for the id', async () => {
    const response = await h.request('GET', `/gateway/v1/meta/${crypto.randomUUID()}`, { token: a.apiKey })
    expect(response.status).toBe(202)
    expect(await response.json()).toEqual({ status: 'pending' })
  })

  test("404 for another organisation's request, never 403 and never its data", async () => {
    const id = await call(h, a.apiKey)
    const response = await h.request('GET', `/gateway/v1/meta/${id}`, { token: b.apiKey })
    expect(response.status).toBe(404)
    expect(await response.text()).not.toContain('gpt-4o')
  })

  for (const bad of [
    'not-a-uuid',
    '123e4567-e89b-12d3-a456-426614174000',
    '123e4567-e89b-42d3-c456-426614174000',
    '123e4567e89b42d3a456426614174000',
  ]) {
    test(`400 for ${bad}, which is not a UUID v4`, async () => {
      expect((await h.request('GET', `/gateway/v1/meta/${bad}`, { token: a.apiKey })).status).toBe(400)
    })
  }

  test('a record lapses after 300 seconds: then 202', async () => {
    const id = await call(h, a.apiKey)
    clock += 299_000
    expect((await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })).status).toBe(200)
    clock += 1_001
    expect((await h.request('GET', `/gateway/v1/meta/${id}`, { token: a.apiKey })).status).toBe(202)
  })

  test('without credentials: 401', async () => {
    expect((await h.request('GET', `/gateway/v1/meta/${crypto.randomUUID()}`)).status).toBe(401)
  })
})

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
describe.skipIf(!redisUrl)('metadata shared through Redis (CI requires it)', () => {
  test('instance B answers for a request served by instance A', async () => {
    const prefix = `gw:test:${crypto.randomUUID()}:`
    const clients = [new Redis(redisUrl as string), new Redis(redisUrl as string)]
    const first = await harness(new RedisMetaStore(clients[0] as Redis, prefix))
    try {
      const org = await first.org()
      await first.services.organizations.addCredits(org.orgId, 1)
      // Instance B shares the database and Redis with A, as instances behind one load balancer do; not its memory.
      const second = await createHarness({ database: first, meta: new RedisMetaStore(clients[1] as Redis, prefix) })
      const id = await call(first, org.apiKey)
      const response = await second.request('GET', `/gateway/v1/meta/${id}`, { token: org.apiKey })
      expect(response.status).toBe(200)
      expect(((await response.json()) as { requestId: string }).requestId).toBe(id)
      const other = await second.org()
      expect((await second.request('GET', `/gateway/v1/meta/${id}`, { token: other.apiKey })).status).toBe(404)
      await second.close()
    } finally {
      await first.close()
      for (const client of clients) client.disconnect()
    }
  })
})

/** The request log's writer, holding every batch back while held, as a stalled database would. */
function holdable(write: LogWriter) {
  let held: Promise<void> | undefined
  let letGo: () => void = () => {}
  return {
    write: (async (entries) => {
      await held
      return write(entries)
    }) satisfies LogWriter,
    hold() {
      held = new Promise<void>((resolve) => {
        letGo = resolve
      })
    },
    release() {
      held = undefined
      letGo()
    },
  }
}

describe.each(DIALECTS)("the lookup reads the call's record, queued in the log or written, on %s", (dialect) => {
  let world: Harness
  let writer: ReturnType<typeof holdable>
  let org: Org
  let other: Org
  beforeAll(async () => {
    world = await createHarness({
      dialect,
      now: () => clock,
      providers: providersAt(fake),
      logWriter: (write) => {
        writer = holdable(write)
        return writer.write
      },
    })
    org = await world.org()
    other = await world.org()
    for (const { orgId } of [org, other]) await world.services.organizations.addCredits(orgId, 10)
  })
  afterAll(async () => {
    writer.release()
    await world.close()
  })

  const lookup = (id: string, token = org.apiKey) => world.request('GET', `/gateway/v1/meta/${id}`, { token })
  const answers = (ids: readonly string[], token = org.apiKey) =>
    Promise.all(
      ids.map(async (id) => {
        const response = await lookup(id, token)
        return [response.status, await response.json()] as const
      }),
    )
  /**
   * What the lookup answers for `ids` while their records wait in the log, and then once they are
   * written: the first from the queue (the database has none of them yet), the second from the database.
   */
  const queuedThenWritten = async (ids: readonly string[], token = org.apiKey) => {
    for (const id of ids) {
      expect(world.requestLog.unwrittenRecord(id)).toBeDefined()
      expect(await world.store.requests.ofAnyOrganization(id)).toBeUndefined()
    }
    const queued = await answers(ids, token)
    writer.release()
    await world.requestLog.flush()
    for (const id of ids) expect(world.requestLog.unwrittenRecord(id)).toBeUndefined()
    return { queued, written: await answers(ids, token) }
  }
  const held = async <T>(work: () => Promise<T>): Promise<T> => {
    writer.hold()
    return work()
  }

  test('answers the same from the queue and from the database, for every kind of call', async () => {
    // An organisation of its own: its budget must not limit the other tests' calls.
    const spender = await world.org()
    await world.services.organizations.addCredits(spender.orgId, 10)
    const send = async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
      const response = await world.request('POST', '/v1/chat/completions', {
        token: spender.apiKey,
        headers,
        body: { model: 'gpt-4o', max_tokens: 500, messages: [{ role: 'user', content: 'x'.repeat(1_100) }], ...body },
      })
      await response.arrayBuffer()
      return response
    }
    const twice = { messages: [{ role: 'user', content: `${'x'.repeat(1_100)} twice` }] }
    const ids = await held(async () => {
      const sent = [
        // Billed to the credits (creditsRemaining), passthrough, one attempt.
        await send(),
        // Translated, with what the translation dropped.
        await send({ model: 'claude-sonnet-4-5', seed: 3 }),
        // The provider failed, after its retries.
        await send({ messages: [{ role: 'user', content: 'fake:error:500' }] }),
        await send(twice, { 'Gw-Cache-Enabled': 'true' }),
        // Answered from the cache: nothing called, a saving.
        await send(twice, { 'Gw-Cache-Enabled': 'true' }),
      ]
      expect(sent.map((response) => response.status)).toEqual([200, 200, 500, 200, 200])
      expect(sent[1]?.headers.get('gw-translation-warning')).toBe('dropped: seed')
      expect(sent[4]?.headers.get('gw-cache')).toBe('HIT')
      return sent.map((response) => response.headers.get('gw-id') as string)
    })
    const { queued, written } = await queuedThenWritten(ids, spender.apiKey)

    // Served by a cheaper model once a budget's downgrade applied: the calls above spent two to three
    // gpt-4o calls' cost, more than a tenth of a limit of ten.
    const limit = (10 * CALL_COST_NANO) / 1e9
    await putLimit(world, spender, { scope: { kind: 'org' }, metric: 'usd', limit, window: 'day', action: 'downgrade' })
    const mapping = { fromModel: 'gpt-4o', toModel: 'claude-3-5-haiku', atPercent: 10 }
    expect(
      (await world.request('POST', '/v1/budget/downgrade-mappings', { token: spender.ownerSession, body: mapping })).status,
    ).toBe(201)
    const downgraded = await held(async () => {
      const response = await send()
      expect(response.headers.get('gw-downgraded-from')).toBe('gpt-4o')
      return response.headers.get('gw-id') as string
    })
    const last = await queuedThenWritten([downgraded], spender.apiKey)
    queued.push(...last.queued)
    written.push(...last.written)

    expect(queued).toEqual(written)
    expect(written.map(([status]) => status)).toEqual([200, 200, 200, 200, 200, 200])
    const metas = written.map(([, meta]) => meta as Record<string, unknown>)
    expect(metas.map((meta) => meta.requestId)).toEqual([...ids, downgraded])
    expect(metas[0]).toHaveProperty('creditsRemaining')
    expect(metas[1]).toMatchObject({ gatewayMode: 'translated', translationWarning: 'dropped: seed' })
    expect(metas[2]).toMatchObject({ status: 'error' })
    expect(metas[4]).toMatchObject({ cached: true })
    expect(metas[4]).toHaveProperty('cacheSavings')
    expect(metas[5]).toMatchObject({ downgradedFrom: 'gpt-4o' })
  })

  test("another organisation's call is 404 and shows nothing of it, queued or written; an unknown id is 202", async () => {
    const id = await held(() => call(world, org.apiKey))
    const { queued, written } = await queuedThenWritten([id], other.apiKey)
    for (const [status, body] of [...queued, ...written]) {
      expect(status).toBe(404)
      expect(JSON.stringify(body)).not.toContain('gpt-4o')
    }
    expect((await lookup(crypto.randomUUID())).status).toBe(202)
  })

  test('the id is matched whatever its case, queued or written', async () => {
    const id = await held(() => call(world, org.apiKey))
    expect(world.requestLog.unwrittenRecord(id)).toBeDefined()
    expect((await lookup(id.toUpperCase())).status).toBe(200)
    writer.release()
    await world.requestLog.flush()
    expect(world.requestLog.unwrittenRecord(id)).toBeUndefined()
    expect((await lookup(id.toUpperCase())).status).toBe(200)
  })

  test("feedback on a call whose record is still queued: its owner's rating is kept, another organisation's is 404", async () => {
    const id = await held(() => call(world, org.apiKey))
    expect(world.requestLog.unwrittenRecord(id)).toBeDefined()
    const rate = (token: string) => world.request('POST', '/v1/feedback', { token, body: { requestId: id, rating: true } })
    expect((await rate(other.apiKey)).status).toBe(404)
    expect((await rate(org.apiKey)).status).toBe(200)
    writer.release()
    await world.requestLog.flush()
    const rows = await world.db.query<{ org_id: string }>('SELECT org_id FROM request_feedback WHERE request_id = $1', [id])
    expect(rows).toEqual([{ org_id: org.orgId }])
  })

  test('it lapses 300 seconds after the call finished, queued or written', async () => {
    const queuedId = await held(() => call(world, org.apiKey))
    expect(world.requestLog.unwrittenRecord(queuedId)).toBeDefined()
    clock += 299_000
    expect((await lookup(queuedId)).status).toBe(200)
    clock += 1_001
    expect(await (await lookup(queuedId)).json()).toEqual({ status: 'pending' })
    writer.release()
    await world.requestLog.flush()
    const writtenId = await call(world, org.apiKey)
    await world.requestLog.flush()
    clock += 299_000
    expect((await lookup(writtenId)).status).toBe(200)
    clock += 1_001
    expect(await (await lookup(writtenId)).json()).toEqual({ status: 'pending' })
  })
})
