import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { RedisInvalidationBus } from '../src/auth/invalidation'
import { silentLogger } from '../src/log'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serviceUrl } from './support/services'

const redisUrl = serviceUrl('GW_TEST_REDIS_URL')
let fake: FakeProvider
let clock = Date.now()
let h: Harness
let org: Org

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake), now: () => clock })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
})
afterAll(async () => {
  await h.close()
  await fake.close()
})

interface KeyView {
  id: string
  name: string
  prefix: string
  scopes: string[]
  expiresAt: string | null
  revokedAt: string | null
  key?: string
}

async function create(body: Record<string, unknown>, token = org.ownerSession): Promise<Response> {
  return h.request('POST', '/v1/api-keys', { token, body })
}
async function created(body: Record<string, unknown>): Promise<KeyView & { key: string }> {
  const response = await create(body)
  expect(response.status).toBe(201)
  return ((await response.json()) as { data: KeyView & { key: string } }).data
}
const chat = (model = 'gpt-4o') => ({ model, messages: [{ role: 'user', content: 'hi' }] })
const dispatch = (token: string, model?: string) => h.request('POST', '/v1/chat/completions', { token, body: chat(model) })
const errorOf = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message

describe('API keys: create, list, update, revoke', () => {
  test('the key is shown once, at creation; lists show metadata only; the row holds no plaintext', async () => {
    const key = await created({ name: 'billing service' })
    expect(key.key).toStartWith(`${key.prefix}_`)
    const list = (await (await h.request('GET', '/v1/api-keys', { token: org.apiKey })).json()) as { data: KeyView[] }
    const listed = list.data.find((k) => k.id === key.id)
    expect(listed).toMatchObject({ name: 'billing service', prefix: key.prefix, scopes: [], revokedAt: null })
    expect(JSON.stringify(list)).not.toContain(key.key.split('_')[1] as string)
    expect(Object.keys(listed ?? {})).not.toContain('key')
    const rows = await h.db.query('SELECT * FROM api_keys')
    expect(JSON.stringify(rows)).not.toContain(key.key.split('_')[1] as string)
    expect((await dispatch(key.key)).status).toBe(200)
  })

  test('rename and expiry; an expiry in the past is refused and changes nothing', async () => {
    const key = await created({ name: 'a' })
    const patched = await h.request('PATCH', `/v1/api-keys/${key.id}`, {
      token: org.ownerSession,
      body: { name: 'b', expiresAt: new Date(clock + 3_600_000).toISOString() },
    })
    expect(((await patched.json()) as { data: KeyView }).data).toMatchObject({ name: 'b' })
    const past = await h.request('PATCH', `/v1/api-keys/${key.id}`, {
      token: org.ownerSession,
      body: { name: 'c', expiresAt: new Date(clock - 1).toISOString() },
    })
    expect(past.status).toBe(400)
    expect((await h.store.credentials.apiKey(key.id))?.name).toBe('b')
  })

  test('a revoked key gets 401 at once on this instance', async () => {
    const key = await created({ name: 'to revoke' })
    expect((await dispatch(key.key)).status).toBe(200)
    const revoked = await h.request('DELETE', `/v1/api-keys/${key.id}`, { token: org.ownerSession })
    expect(((await revoked.json()) as { data: KeyView }).data.revokedAt).not.toBeNull()
    expect((await dispatch(key.key)).status).toBe(401)
  })

  test('and within one second on another instance', async () => {
    const other = await createHarness({ database: h, providers: providersAt(fake), now: () => clock })
    const key = await created({ name: 'shared' })
    expect((await other.request('GET', '/v1/api-keys', { token: key.key })).status).toBe(200)
    await h.request('DELETE', `/v1/api-keys/${key.id}`, { token: org.ownerSession })
    clock += 1_001
    expect((await other.request('GET', '/v1/api-keys', { token: key.key })).status).toBe(401)
    await other.close()
  })

  test.skipIf(!redisUrl)('and at once on another instance, through Redis (CI requires it)', async () => {
    const clients = [new Redis(redisUrl as string), new Redis(redisUrl as string)]
    const [busA, busB] = clients.map((c) => new RedisInvalidationBus(c, silentLogger)) as [
      RedisInvalidationBus,
      RedisInvalidationBus,
    ]
    const a = await createHarness({ database: h, providers: providersAt(fake), now: () => clock, invalidations: busA })
    const b = await createHarness({ database: h, providers: providersAt(fake), now: () => clock, invalidations: busB })
    try {
      const created = await a.request('POST', '/v1/api-keys', { token: org.ownerSession, body: { name: 'instant' } })
      const key = ((await created.json()) as { data: KeyView & { key: string } }).data
      await Bun.sleep(100) // both subscriptions are live
      expect((await b.request('GET', '/v1/api-keys', { token: key.key })).status).toBe(200)
      await a.request('DELETE', `/v1/api-keys/${key.id}`, { token: org.ownerSession })
      // No clock change: B forgets because it was told, not because its cache lapsed.
      for (let i = 0; i < 50 && (await b.request('GET', '/v1/api-keys', { token: key.key })).status !== 401; i++)
        await Bun.sleep(10)
      expect((await b.request('GET', '/v1/api-keys', { token: key.key })).status).toBe(401)
    } finally {
      await a.close()
      await b.close()
      await busA.close()
      await busB.close()
      for (const c of clients) c.disconnect()
    }
  })

  test('every change is audited by id and prefix, never by secret', async () => {
    const key = await created({ name: 'audited' })
    await h.request('PUT', `/v1/api-keys/${key.id}/scopes`, { token: org.ownerSession, body: { scopes: ['gateway'] } })
    await h.request('DELETE', `/v1/api-keys/${key.id}`, { token: org.ownerSession })
    const entries = (await h.store.org(org.orgId).audit.list()).filter((e) => e.target === key.prefix)
    expect(entries.map((e) => e.action).sort()).toEqual([
      'DELETE /v1/api-keys/:apiKeyId',
      'POST /v1/api-keys',
      'PUT /v1/api-keys/:apiKeyId/scopes',
    ])
    expect(entries.every((e) => e.outcome === 'success' && e.actorId === org.ownerId && e.principalKind === 'session')).toBe(true)
    expect(JSON.stringify(entries)).not.toContain(key.key.split('_')[1] as string)
  })
})

describe('API keys: who may manage them', () => {
  test('a Member key cannot create keys: 403', async () => {
    expect((await create({ name: 'x' }, org.apiKey)).status).toBe(403)
  })

  test("another organisation's key: 404 on every write, and it is left alone", async () => {
    const other = await h.org('growth')
    const theirs = await h.store.org(other.orgId).apiKeys.list()
    const id = theirs[0]?.id as string
    expect((await h.request('PATCH', `/v1/api-keys/${id}`, { token: org.ownerSession, body: { name: 'mine now' } })).status).toBe(
      404,
    )
    expect((await h.request('DELETE', `/v1/api-keys/${id}`, { token: org.ownerSession })).status).toBe(404)
    expect((await h.request('PUT', `/v1/api-keys/${id}/scopes`, { token: org.ownerSession, body: { scopes: [] } })).status).toBe(
      404,
    )
    expect((await h.store.credentials.apiKey(id))?.revokedAt).toBeNull()
  })

  test('the scope entitlement is readable with org.read', async () => {
    const response = await h.request('GET', '/v1/api-keys/scopes/entitlement', { token: org.apiKey })
    expect(((await response.json()) as { data: { capabilities: string[] } }).data.capabilities).toEqual([
      'gateway',
      'traffic.read',
      'traffic.annotate',
    ])
  })
})

describe('API keys: scopes', () => {
  test('a scope above Member is refused with 400, and so is an unknown one', async () => {
    for (const scope of ['keys.write', 'ownership', 'org.members.write']) {
      const response = await create({ name: 'greedy', scopes: [scope] })
      expect(response.status).toBe(400)
      expect(await errorOf(response)).toContain('never holds more than the Member permissions')
    }
    expect(await errorOf(await create({ name: 'odd', scopes: ['admin'] }))).toContain('unknown scope "admin"')
  })

  test('a key without the gateway scope cannot dispatch; the refusal names the scope', async () => {
    const key = await created({ name: 'analytics', scopes: ['traffic.read'] })
    const refused = await dispatch(key.key)
    expect(refused.status).toBe(403)
    expect(await errorOf(refused)).toContain('"gateway"')
    expect((await h.request('GET', '/v1/models', { token: key.key })).status).toBe(403)
  })

  test('a gateway-only key cannot read traffic; the refusal names the scope', async () => {
    const key = await created({ name: 'service', scopes: ['gateway'] })
    expect((await dispatch(key.key)).status).toBe(200)
    const refused = await h.request('POST', '/v1/request/query', { token: key.key, body: {} })
    expect(refused.status).toBe(403)
    expect(await errorOf(refused)).toContain('scope "traffic.read"')
  })

  test('provider and model allowlists', async () => {
    const key = await created({ name: 'narrow', scopes: ['provider:openai', 'model:gpt-4o*'] })
    expect((await dispatch(key.key, 'gpt-4o-mini')).status).toBe(200)
    const otherModel = await dispatch(key.key, 'gpt-4.1')
    expect(otherModel.status).toBe(403)
    expect(otherModel.headers.get('gw-status')).toBe('error')
    const otherProvider = await dispatch(key.key, 'claude-sonnet-4-5')
    expect(otherProvider.status).toBe(403)
    expect(await errorOf(otherProvider)).toContain('provider:anthropic')
  })

  test('scopes can be replaced, and take effect at once', async () => {
    const key = await created({ name: 'changing' })
    expect((await dispatch(key.key)).status).toBe(200)
    await h.request('PUT', `/v1/api-keys/${key.id}/scopes`, { token: org.ownerSession, body: { scopes: ['traffic.read'] } })
    expect((await dispatch(key.key)).status).toBe(403)
  })
})

describe('the organisation-wide MCP connection listings (keys.write)', () => {
  test('answer from their tables: empty, then what is there, only this organisation', async () => {
    const fresh = await h.org('growth')
    for (const path of ['/v1/mcp-connections/org', '/v1/mcp/upstream/connections/org']) {
      const response = await h.request('GET', path, { token: fresh.ownerSession })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ data: [], error: null })
      expect((await h.request('GET', path, { token: fresh.apiKey })).status).toBe(403)
    }
    await h.store.org(fresh.orgId).mcpConnections.add({
      id: crypto.randomUUID(),
      userId: fresh.ownerId,
      client: 'claude-desktop',
      scopes: ['tools'],
      createdAt: new Date(),
      revokedAt: null,
    })
    const listed = (await (await h.request('GET', '/v1/mcp-connections/org', { token: fresh.ownerSession })).json()) as {
      data: Array<{ client: string }>
    }
    expect(listed.data.map((c) => c.client)).toEqual(['claude-desktop'])
    const elsewhere = (await (await h.request('GET', '/v1/mcp-connections/org', { token: org.ownerSession })).json()) as {
      data: unknown[]
    }
    expect(elsewhere.data).toEqual([])
  })
})
