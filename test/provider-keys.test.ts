import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { maskSecret, Vault } from '../src/auth/vault'
import { createLogger } from '../src/log'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org, TEST_SECRET } from './support/harness'

const SECRET = 'sk-org-own-0123456789abcdefSECRET'

describe('the vault', () => {
  const vault = new Vault(TEST_SECRET)

  test('round trip; a fresh nonce each time', async () => {
    const a = await vault.seal(SECRET, 'ctx')
    expect(await vault.open(a, 'ctx')).toBe(SECRET)
    expect(await vault.seal(SECRET, 'ctx')).not.toBe(a)
    expect(a).not.toContain(SECRET)
    expect(await vault.open(await vault.seal('héllo ✓ 🔑', 'ctx'), 'ctx')).toBe('héllo ✓ 🔑')
  })

  test('a sealed value opens only in its own context and under its own server secret', async () => {
    const sealed = await vault.seal(SECRET, 'provider_key:org-a:1')
    await expect(vault.open(sealed, 'provider_key:org-b:1')).rejects.toThrow()
    await expect(new Vault(`${TEST_SECRET}-other`).open(sealed, 'provider_key:org-a:1')).rejects.toThrow()
    const [v, nonce, tag, body] = sealed.split('.')
    const flipped = `${v}.${nonce}.${tag}.${(body as string).slice(0, -2)}AA`
    await expect(vault.open(flipped, 'provider_key:org-a:1')).rejects.toThrow()
    await expect(vault.open(`${v}.${nonce}.${tag}`, 'provider_key:org-a:1')).rejects.toThrow('not a sealed value of this vault')
  })

  test('a value sealed by an earlier gw (AES-256-GCM through node:crypto) still opens', async () => {
    const earlier = new Vault('test-server-secret-0123456789-abcdefghij')
    const sealed = 'v1.vMwVAm1GLfalLRCa.G69vTYz3ayI5Ig4LYG3yoQ.I0K6F1M-kEC65rrSJQNJMQBFyI-UZShAsmi89-DVbuUl9_SD'
    expect(await earlier.open(sealed, 'provider_key:org-a:key-1')).toBe('sk-sealed-by-gw-0.x-with-node-crypto')
    await expect(earlier.open(sealed, 'provider_key:org-a:key-2')).rejects.toThrow()
  })

  test('masks show the first and last four characters only', () => {
    expect(maskSecret(SECRET)).toBe('sk-o…CRET')
    expect(maskSecret('short')).toBe('…')
  })
})

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

interface KeyView {
  id: string
  provider: string
  name: string
  secret: string
  baseUrl: string | null
  weight: number
}

for (const dialect of DIALECTS) {
  describe(`provider keys and the vault routes (${dialect})`, () => {
    let h: Harness
    let org: Org
    const logLines: string[] = []
    beforeAll(async () => {
      h = await createHarness({
        dialect,
        providers: providersAt(fake),
        log: createLogger('debug', (line) => logLines.push(line)),
      })
      org = await h.org('growth')
    })
    afterAll(() => h.close())

    const add = async (path: string, body: Record<string, unknown>, token = org.ownerSession) =>
      h.request('POST', path, { token, body })

    test('stored through either route, read back masked only, the raw row sealed', async () => {
      const created = await add('/v1/api-keys/provider-key', { provider: 'openai', name: 'prod', secret: SECRET })
      expect(created.status).toBe(201)
      const key = ((await created.json()) as { data: KeyView }).data
      expect(key).toMatchObject({ provider: 'openai', name: 'prod', secret: 'sk-o…CRET' })
      const viaVault = (
        (await (await add('/v1/vault/add', { provider: 'anthropic', name: 'claude', secret: `${SECRET}2` })).json()) as {
          data: KeyView
        }
      ).data
      for (const path of [
        '/v1/api-keys/provider-keys',
        '/v1/vault/keys',
        `/v1/api-keys/provider-key/${key.id}`,
        `/v1/vault/key/${viaVault.id}`,
      ]) {
        const response = await h.request('GET', path, { token: org.ownerSession })
        expect(response.status).toBe(200)
        expect(await response.text()).not.toContain(SECRET)
      }
      const rows = await h.db.query('SELECT * FROM provider_keys')
      expect(JSON.stringify(rows)).not.toContain(SECRET)
      expect(JSON.stringify(await h.db.query('SELECT * FROM audit_log'))).not.toContain(SECRET)
    })

    test('update through either route: rename, replace the secret, re-point; audited without the secret', async () => {
      const key = (
        (await (await add('/v1/vault/add', { provider: 'openai', name: 'old', secret: SECRET })).json()) as { data: KeyView }
      ).data
      const renamed = await h.request('PATCH', `/v1/vault/update/${key.id}`, {
        token: org.ownerSession,
        body: { name: 'new', secret: 'sk-replacement-9999' },
      })
      expect(((await renamed.json()) as { data: KeyView }).data).toMatchObject({ name: 'new', secret: 'sk-r…9999' })
      const repointed = await h.request('PATCH', `/v1/api-keys/provider-key/${key.id}`, {
        token: org.ownerSession,
        body: { baseUrl: 'https://llm.example.test/v1' },
      })
      expect(((await repointed.json()) as { data: KeyView }).data.baseUrl).toBe('https://llm.example.test/v1')
      const audit = JSON.stringify(await h.store.org(org.orgId).audit.list())
      expect(audit).toContain('PATCH /v1/vault/update/:id')
      expect(audit).toContain('PATCH /v1/api-keys/provider-key/:providerKeyId')
      expect(audit).not.toContain('sk-replacement-9999')
      expect((await h.request('DELETE', `/v1/api-keys/provider-key/${key.id}`, { token: org.ownerSession })).status).toBe(200)
      expect((await h.request('GET', `/v1/vault/key/${key.id}`, { token: org.ownerSession })).status).toBe(404)
    })

    test('bad input is refused and stores nothing; a Member key and another organisation get 403 and 404', async () => {
      const before = (await h.store.org(org.orgId).providerKeys.list()).length
      expect((await add('/v1/vault/add', { provider: 'nonesuch', name: 'x', secret: 's' })).status).toBe(400)
      expect((await add('/v1/vault/add', { provider: 'openai', name: 'x', secret: 's', baseUrl: 'ftp://x' })).status).toBe(400)
      expect((await add('/v1/vault/add', { provider: 'openai', name: 'x', secret: 's' }, org.apiKey)).status).toBe(403)
      expect((await h.store.org(org.orgId).providerKeys.list()).length).toBe(before)
      const [mine] = await h.store.org(org.orgId).providerKeys.list()
      const other = await h.org('growth')
      expect((await h.request('GET', `/v1/vault/key/${mine?.id}`, { token: other.ownerSession })).status).toBe(404)
      expect((await h.request('DELETE', `/v1/api-keys/provider-key/${mine?.id}`, { token: other.ownerSession })).status).toBe(404)
    })

    test('a weight is kept and shown; 1 when absent; changed by either update route', async () => {
      const plain = (
        (await (await add('/v1/vault/add', { provider: 'openai', name: 'w1', secret: SECRET })).json()) as {
          data: KeyView
        }
      ).data
      expect(plain.weight).toBe(1)
      const created = await add('/v1/api-keys/provider-key', { provider: 'openai', name: 'w3', secret: SECRET, weight: 3 })
      expect(created.status).toBe(201)
      const heavy = ((await created.json()) as { data: KeyView }).data
      expect(heavy.weight).toBe(3)
      const standby = await add('/v1/vault/add', { provider: 'openai', name: 'w0', secret: SECRET, weight: 0 })
      expect(((await standby.json()) as { data: KeyView }).data.weight).toBe(0)

      const read = await h.request('GET', `/v1/vault/key/${heavy.id}`, { token: org.ownerSession })
      expect(((await read.json()) as { data: KeyView }).data.weight).toBe(3)
      const listed = (
        (await (await h.request('GET', '/v1/api-keys/provider-keys', { token: org.ownerSession })).json()) as {
          data: KeyView[]
        }
      ).data
      expect(listed.find((k) => k.id === plain.id)?.weight).toBe(1)

      for (const [path, weight] of [
        [`/v1/api-keys/provider-key/${plain.id}`, 1000],
        [`/v1/vault/update/${plain.id}`, 0],
      ] as const) {
        const changed = await h.request('PATCH', path, { token: org.ownerSession, body: { weight } })
        expect(changed.status).toBe(200)
        expect(((await changed.json()) as { data: KeyView }).data).toMatchObject({ weight, name: 'w1', secret: 'sk-o…CRET' })
        expect((await h.store.org(org.orgId).providerKeys.get(plain.id))?.weight).toBe(weight)
      }
    })

    test('a weight that is no integer from 0 to 1000 is a 400 that stores and changes nothing', async () => {
      const [existing] = await h.store.org(org.orgId).providerKeys.list()
      const id = existing?.id as string
      const before = JSON.stringify(await h.store.org(org.orgId).providerKeys.list())
      for (const weight of [-1, 1001, 1.5, 'x', null, true]) {
        for (const path of ['/v1/api-keys/provider-key', '/v1/vault/add']) {
          const refused = await add(path, { provider: 'openai', name: 'bad weight', secret: SECRET, weight })
          expect(refused.status).toBe(400)
          expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('weight')
        }
        for (const path of [`/v1/api-keys/provider-key/${id}`, `/v1/vault/update/${id}`]) {
          const refused = await h.request('PATCH', path, { token: org.ownerSession, body: { name: 'renamed', weight } })
          expect(refused.status).toBe(400)
        }
      }
      expect(JSON.stringify(await h.store.org(org.orgId).providerKeys.list())).toBe(before)
    })

    test('keysFor: every key of that provider, newest first, of that organisation only; a change is seen at once', async () => {
      const own = await h.org('growth')
      const other = await h.org('growth')
      const ids: string[] = []
      for (const [name, weight] of [
        ['first', 2],
        ['second', 0],
      ] as const) {
        const created = await h.request('POST', '/v1/vault/add', {
          token: own.ownerSession,
          body: { provider: 'anthropic', name, secret: `${SECRET}-${name}`, weight },
        })
        ids.push(((await created.json()) as { data: KeyView }).data.id)
        // Keys made in one millisecond would be ordered by id, not by age.
        await Bun.sleep(3)
      }
      await h.request('POST', '/v1/vault/add', {
        token: own.ownerSession,
        body: { provider: 'openai', name: 'elsewhere', secret: SECRET },
      })
      await h.request('POST', '/v1/vault/add', {
        token: other.ownerSession,
        body: { provider: 'anthropic', name: 'theirs', secret: SECRET },
      })

      const [first, second] = ids as [string, string]
      const keys = await h.services.directory.connections.keysFor(own.orgId, 'anthropic')
      expect(keys.map((k) => k.id)).toEqual([second, first])
      for (const key of keys) {
        const name = key.id === first ? 'first' : 'second'
        expect(key).toMatchObject({ provider: 'anthropic', apiKey: `${SECRET}-${name}`, weight: name === 'first' ? 2 : 0 })
      }
      expect(await h.services.directory.connections.keysFor(other.orgId, 'openai')).toEqual([])
      expect((await h.services.directory.connections.keysFor(other.orgId, 'anthropic')).map((k) => k.apiKey)).toEqual([SECRET])

      // Cached for a second, but a change through the service is seen by the next read.
      const changed = await h.request('PATCH', `/v1/vault/update/${second}`, {
        token: own.ownerSession,
        body: { weight: 5 },
      })
      expect(changed.status).toBe(200)
      expect((await h.services.directory.connections.keysFor(own.orgId, 'anthropic')).find((k) => k.id === second)?.weight).toBe(
        5,
      )
      await h.request('DELETE', `/v1/api-keys/provider-key/${first}`, { token: own.ownerSession })
      expect((await h.services.directory.connections.keysFor(own.orgId, 'anthropic')).map((k) => k.id)).toEqual([second])
      // What a caller does to its list is its own.
      const mine = await h.services.directory.connections.keysFor(own.orgId, 'anthropic')
      mine.length = 0
      expect(await h.services.directory.connections.keysFor(own.orgId, 'anthropic')).toHaveLength(1)
    })

    test('the log of the whole exchange, with a call on the own key, holds no secret', async () => {
      await add('/v1/vault/add', { provider: 'openai', name: 'for the log', secret: SECRET })
      const response = await h.request('POST', '/v1/chat/completions', {
        token: org.apiKey,
        body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(response.status).toBe(200)
      expect(logLines.some((line) => line.includes('gateway request'))).toBe(true)
      expect(logLines.join('\n')).not.toContain(SECRET)
      expect(logLines.join('\n')).not.toContain(org.apiKey.split('_')[1] as string)
    })
  })
}

describe('BYOK before PTB', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ providers: providersAt(fake) })
  })
  afterAll(() => h.close())

  const chat = (model = 'gpt-4o') => ({ model, messages: [{ role: 'user', content: 'hi' }] })

  test("the organisation's own key is used, no credits are needed or taken, no creditsRemaining", async () => {
    const org = await h.org()
    await h.request('POST', '/v1/vault/add', {
      token: org.ownerSession,
      body: { provider: 'openai', name: 'own', secret: SECRET },
    })
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat() })
    expect(response.status).toBe(200)
    expect(fake.calls.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`)
    const meta = (await (
      await h.request('GET', `/gateway/v1/meta/${response.headers.get('gw-id')}`, { token: org.apiKey })
    ).json()) as Record<string, unknown>
    expect(meta.creditsRemaining).toBeUndefined()
    expect(typeof meta.requestCost).toBe('number')
    expect((await h.store.organizations.get(org.orgId))?.creditBalanceNano).toBe(0)
    await h.requestLog.flush()
    expect((await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string))?.ptb).toBe(false)
  })

  test("without an own key for that provider, the operator's key serves and credits pay (PTB)", async () => {
    const org = await h.org()
    await h.request('POST', '/v1/vault/add', {
      token: org.ownerSession,
      body: { provider: 'anthropic', name: 'own', secret: SECRET },
    })
    await h.services.organizations.addCredits(org.orgId, 1)
    const response = await h.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat() })
    expect(response.status).toBe(200)
    expect(fake.calls.at(-1)?.headers.authorization).toBe('Bearer sk-operator')
  })

  test('without either: 400 saying no key is configured for that provider', async () => {
    const lonely = await createHarness({ database: h, providers: { openai: { baseUrl: 'https://api.openai.com/v1' } } })
    const org = await lonely.org()
    const response = await lonely.request('POST', '/v1/chat/completions', { token: org.apiKey, body: chat() })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'no key is configured for provider openai',
    )
    await lonely.close()
  })
})

describe('proxy keys', () => {
  let h: Harness
  let org: Org
  let providerKeyId: string
  beforeAll(async () => {
    h = await createHarness({ providers: providersAt(fake) })
    org = await h.org()
    const created = await h.request('POST', '/v1/vault/add', {
      token: org.ownerSession,
      body: { provider: 'anthropic', name: 'claude', secret: SECRET },
    })
    providerKeyId = ((await created.json()) as { data: KeyView }).data.id
    // Another anthropic key, newer: a proxy key must still use the one it is bound to.
    await h.request('POST', '/v1/vault/add', {
      token: org.ownerSession,
      body: { provider: 'anthropic', name: 'newer', secret: `${SECRET}-newer` },
    })
  })
  afterAll(() => h.close())

  const messages = (model: string) => ({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })

  test('reaches its provider key only, within its scopes', async () => {
    const created = await h.request('POST', '/v1/api-keys/proxy-key', {
      token: org.ownerSession,
      body: { providerKeyId, name: 'for the contractor', scopes: ['gateway'] },
    })
    expect(created.status).toBe(201)
    const proxy = ((await created.json()) as { data: { id: string; key: string; providerKeyId: string } }).data
    expect(proxy.providerKeyId).toBe(providerKeyId)
    expect((await h.request('POST', '/v1/messages', { token: proxy.key, body: messages('claude-sonnet-4-5') })).status).toBe(200)
    expect(fake.calls.at(-1)?.headers['x-api-key']).toBe(SECRET)
    const elsewhere = await h.request('POST', '/v1/chat/completions', {
      token: proxy.key,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(elsewhere.status).toBe(403)
    expect(((await elsewhere.json()) as { error: { message: string } }).error.message).toContain(
      'reaches only provider anthropic',
    )
    expect((await h.request('POST', '/v1/request/query', { token: proxy.key, body: {} })).status).toBe(403)

    const rescoped = await h.request('PUT', `/v1/api-keys/proxy-key/${proxy.id}/scopes`, {
      token: org.ownerSession,
      body: { scopes: ['gateway', 'model:claude-haiku*'] },
    })
    expect(rescoped.status).toBe(200)
    expect((await h.request('POST', '/v1/messages', { token: proxy.key, body: messages('claude-sonnet-4-5') })).status).toBe(403)
  })

  test("a new secret on the bound provider key is used by the proxy key's next call", async () => {
    const created = await h.request('POST', '/v1/api-keys/proxy-key', {
      token: org.ownerSession,
      body: { providerKeyId, name: 'rotating' },
    })
    const proxy = ((await created.json()) as { data: { key: string } }).data
    expect((await h.request('POST', '/v1/messages', { token: proxy.key, body: messages('claude-sonnet-4-5') })).status).toBe(200)
    const rotated = await h.request('PATCH', `/v1/vault/update/${providerKeyId}`, {
      token: org.ownerSession,
      body: { secret: `${SECRET}-rotated` },
    })
    expect(rotated.status).toBe(200)
    expect((await h.request('POST', '/v1/messages', { token: proxy.key, body: messages('claude-sonnet-4-5') })).status).toBe(200)
    expect(fake.calls.at(-1)?.headers['x-api-key']).toBe(`${SECRET}-rotated`)
  })

  test('a provider key of another organisation, or an ordinary key as a proxy key: 404', async () => {
    const other = await h.org()
    expect(
      (await h.request('POST', '/v1/api-keys/proxy-key', { token: other.ownerSession, body: { providerKeyId, name: 'theft' } }))
        .status,
    ).toBe(404)
    const [ordinary] = await h.store
      .org(org.orgId)
      .apiKeys.list()
      .then((keys) => keys.filter((k) => k.providerKeyId === null))
    expect(
      (await h.request('PUT', `/v1/api-keys/proxy-key/${ordinary?.id}/scopes`, { token: org.ownerSession, body: { scopes: [] } }))
        .status,
    ).toBe(404)
  })

  test('deleting the provider key takes its proxy keys with it', async () => {
    const created = await h.request('POST', '/v1/api-keys/proxy-key', {
      token: org.ownerSession,
      body: { providerKeyId, name: 'short-lived' },
    })
    const proxy = ((await created.json()) as { data: { id: string; key: string } }).data
    expect((await h.request('DELETE', `/v1/api-keys/provider-key/${providerKeyId}`, { token: org.ownerSession })).status).toBe(
      200,
    )
    expect(await h.store.credentials.apiKey(proxy.id)).toBeUndefined()
  })
})
