import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../src/config'
import { openDatabase } from '../src/store/database'
import { migrate } from '../src/store/migrate'
import { createStore } from '../src/store/store'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { type ScratchDatabase, scratchPostgres, serviceUrl } from './support/services'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy'

/**
 * Postgres taken away while gw serves: gw reaches its database through a proxy on loopback that the
 * test cuts and restores, so the shared server is never touched. Every answer during the outage is a
 * 503 `unavailable` with a Retry-After, in the format of the caller's SDK; nothing is lost; and gw
 * recovers by itself when the database is back.
 */
const databaseUrl = serviceUrl('GW_TEST_DATABASE_URL')

describe.skipIf(!databaseUrl)('Postgres unreachable', () => {
  let scratch: ScratchDatabase
  let proxy: TcpProxy
  let fake: FakeProvider
  let h: Harness
  let org: Org
  let clock = Date.now()

  beforeAll(async () => {
    scratch = await scratchPostgres(databaseUrl as string)
    const direct = await openDatabase({ database: { kind: 'postgres', url: scratch.url } })
    await migrate(direct)
    await direct.close()
    const target = new URL(scratch.url)
    proxy = startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const viaProxy = new URL(scratch.url)
    viaProxy.port = String(proxy.port)
    const location = loadConfig({ GW_DATABASE_URL: viaProxy.toString() }).database
    const db = await openDatabase({ database: location })
    const store = createStore(db)
    fake = await startFakeProvider()
    h = await createHarness({
      database: { db, store, location, close: () => db.close() },
      providers: providersAt(fake),
      now: () => clock,
      probes: [
        {
          name: 'database',
          required: true,
          check: async () => {
            await store.ping()
            return 'ok'
          },
        },
      ],
    })
    org = await h.org('growth')
    await h.services.organizations.addCredits(org.orgId, 100)
  })
  // Room for the request log's backoff, should a failed test have left the database cut.
  afterAll(async () => {
    proxy.restore()
    await h.close()
    await h.db.close()
    proxy.close()
    await fake.close()
    await scratch.drop()
  }, 20_000)

  const chat = (path = '/v1/chat/completions') =>
    h.request('POST', path, {
      token: org.apiKey,
      body:
        path === '/v1/messages'
          ? { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }
          : { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    })

  test('503 unavailable with Retry-After in both answer families, then recovery with nothing lost', async () => {
    expect((await chat()).status).toBe(200)
    await h.requestLog.flush()

    proxy.cut()
    // Within the caches' second a call is still served from what gw knows, and its record waits.
    const served = await chat()
    expect(served.status).toBe(200)
    const waiting = served.headers.get('gw-id') as string
    await h.requestLog.flush()
    expect(h.requestLog.snapshot()).toMatchObject({ queued: 1, failedFlushes: 1 })

    clock += 2_000
    const management = await h.request('GET', '/v1/team', { token: org.ownerSession })
    expect(management.status).toBe(503)
    expect(management.headers.get('retry-after')).toBe('5')
    expect(await management.json()).toMatchObject({ data: null, error: { code: 'unavailable' } })

    const write = await h.request('POST', '/v1/team', { token: org.ownerSession, body: { name: 'during the outage' } })
    expect(write.status).toBe(503)

    const openai = await chat()
    expect(openai.status).toBe(503)
    expect(openai.headers.get('retry-after')).toBe('5')
    expect(await openai.json()).toMatchObject({ error: { type: 'api_error', code: 'unavailable' } })

    const anthropic = await chat('/v1/messages')
    expect(anthropic.status).toBe(503)
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } })

    const health = await h.request('GET', '/healthcheck')
    expect(health.status).toBe(503)
    expect(await health.json()).toMatchObject({ status: 'down', components: { database: 'down' } })

    proxy.restore()
    clock += 2_000
    await h.requestLog.drain()
    expect(await h.store.requests.get(org.orgId, waiting)).toBeDefined()
    expect(h.requestLog.snapshot()).toMatchObject({ queued: 0, dropped: 0, setAside: 0 })
    expect((await h.request('GET', '/v1/team', { token: org.ownerSession })).status).toBe(200)
    const after = await chat()
    expect(after.status).toBe(200)
    await h.requestLog.flush()
    expect(await h.store.requests.get(org.orgId, after.headers.get('gw-id') as string)).toBeDefined()
    expect((await h.request('GET', '/healthcheck')).status).toBe(200)
  })
})

describe('the database away in the middle of a gateway call', () => {
  test("is a 503 with Retry-After in the caller's format, recorded, not a 500", async () => {
    const fake = await startFakeProvider()
    const h = await createHarness({ providers: providersAt(fake) })
    try {
      const org = await h.org()
      // Authenticated from the cache, then the organisation's provider keys cannot be read.
      h.services.directory.connections.keysFor = async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
      }
      for (const path of ['/v1/chat/completions', '/v1/messages']) {
        const response = await h.request('POST', path, {
          token: org.apiKey,
          body: { model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
        })
        expect(response.status).toBe(503)
        expect(response.headers.get('retry-after')).toBe('5')
        expect(response.headers.get('gw-status')).toBe('error')
        expect(await response.json()).toMatchObject(
          path === '/v1/messages' ? { type: 'error', error: { type: 'api_error' } } : { error: { code: 'unavailable' } },
        )
        await h.requestLog.flush()
        expect((await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string))?.httpStatus).toBe(503)
      }
    } finally {
      await h.close()
      await fake.close()
    }
  })
})
